"""Exercises with automatic graders. Each lab notebook imports its grader from
``labs.graders`` and its hints; reference solutions live apart in ``labs.solutions``."""
