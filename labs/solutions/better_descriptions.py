"""Reference solution for labs/10_better_descriptions.py."""


def describe_tools() -> dict[str, str]:
    return {
        "calculate": (
            "Apply one arithmetic operation to two numbers: `a` `operator` `b`, where `operator` is add, "
            "subtract, multiply or divide. Use it when the user asks to add, subtract, multiply or "
            "divide, e.g. 'what is 12 times 7' or '15减去8等于几'. Not for square roots and not "
            "for money conversion."
        ),
        "square_root": (
            "Compute the square root of one non-negative number `x`. Use it when the user asks for "
            "a square root (平方根), e.g. 'square root of 256' or '144的平方根'. Not for adding, "
            "subtracting, multiplying or dividing two numbers."
        ),
        "convert_currency": (
            "Convert an `amount` of money from one currency to another at today's rate. Use it "
            "when the user asks what an amount is worth in another currency, e.g. '250 euros in "
            "US dollars' or '50英镑换成港币'. `from_currency` and `to_currency` are ISO 4217 codes "
            "such as USD, EUR, CNY. Not for arithmetic on plain numbers or square roots."
        ),
    }
