"""Table II, randomized response (Mironov 2017, Prop. 5)."""
from .table2 import prove_row

CHEAP = True


def prove():
    return prove_row("table2_randomized_response", "randomized_response",
                     "1/(alpha-1) * log(p**alpha * (1-p)**(1-alpha) + (1-p)**alpha * p**(1-alpha))",
                     "(2*p - 1) * log(p/(1-p))", "log(p/(1-p))", {}, {"p": "p"},
                     "Table II: randomized response",
                     r"D_\alpha = \frac{1}{\alpha-1}\log\left(p^\alpha(1-p)^{1-\alpha} + (1-p)^\alpha p^{1-\alpha}\right),\ "
                     r"D_1 = (2p-1)\log\frac{p}{1-p},\ D_\infty = \log\frac{p}{1-p}")
