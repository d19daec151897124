"""Table II, Laplace (Mironov 2017, Prop. 6), sensitivity 1."""
from .table2 import prove_row

CHEAP = True


def prove():
    return prove_row("table2_laplace", "laplace",
                     "1/(alpha-1) * log(alpha/(2*alpha-1) * exp((alpha-1)/lam) + (alpha-1)/(2*alpha-1) * exp(-alpha/lam))",
                     "1/lam + exp(-1/lam) - 1", "1/lam", {"sensitivity": 1}, {"lam": "b"},
                     "Table II: Laplace mechanism",
                     r"D_\alpha = \frac{1}{\alpha-1}\log\left(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)/\lambda}"
                     r" + \frac{\alpha-1}{2\alpha-1}e^{-\alpha/\lambda}\right),\ D_1 = \frac1\lambda + e^{-1/\lambda} - 1,\ D_\infty = \frac1\lambda")
