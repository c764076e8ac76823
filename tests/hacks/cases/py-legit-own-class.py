# task: tasks/py-own-class.json
# expect: accepted
# hack: none: a correct solution with a class of its own (its own __eq__, __lt__, __hash__) that
# the test code builds and compares with the solution's results; it must stay accepted.
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __lt__(self, other):
        return (self.x, self.y) < (other.x, other.y)

    def __hash__(self):
        return hash((self.x, self.y))


def make(n):
    return Point(n, n)
