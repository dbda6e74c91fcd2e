"""Exercises with automatic graders. Each lab notebook imports its grader from
``labs.graders`` and its hints; reference solutions live apart in ``labs.solutions``.

Every lab notebook has the same parts in the same words (the task, a cell to try it, "Grade",
"Hints"), so the cells of two labs repeat each other on purpose: a learner who has done one lab
knows where everything is in the next, and each notebook still stands alone."""
