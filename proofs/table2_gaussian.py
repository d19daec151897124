"""Table II, Gaussian (Mironov 2017, Prop. 7), sensitivity 1."""
from .table2 import prove_row

CHEAP = True


def prove():
    return prove_row("table2_gaussian", "gaussian", "alpha/(2*sigma**2)", "1/(2*sigma**2)", "oo",
                     {"sensitivity": 1}, {"sigma": "sigma"}, "Table II: Gaussian mechanism",
                     r"D_\alpha = \frac{\alpha}{2\sigma^2},\ D_1 = \frac{1}{2\sigma^2},\ D_\infty = \infty")
