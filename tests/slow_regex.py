"""A regular expression that cannot finish in time, for the tests of the regex time bound."""

#: A Text Matching condition whose pattern backtracks exponentially on :data:`SLOW_TEXT`.
SLOW = 'regexp("(a|aa)+$")'

#: A run of a's that does not end the text: ``(a|aa)+$`` tries every way to split the run
#: (Fibonacci(61), about 2.5 * 10**12, ways) before it gives up.
SLOW_TEXT = "a" * 60 + "!"
