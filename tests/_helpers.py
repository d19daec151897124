"""Registry entries shared by the tests of ``rdpsym regress`` (the library's and the command's)."""

#: The Laplace mechanism's KL (Mironov 2017, arXiv:1702.07476 v3, Table II) with its signs flipped:
#: an entry that must be refuted.
FLIPPED_LAPLACE_KL = '''
[[entry]]
name = "laplace/kl-flipped"
mechanism = "laplace"
order = "1"
formula = "-1/lambda - exp(-1/lambda) + 1"
source = "a KL branch with flipped signs (deliberately broken)"
'''

#: The Gaussian mechanism's KL, a correct entry at one order.
GAUSSIAN_KL = '''
[[entry]]
name = "gaussian/kl"
mechanism = "gaussian"
order = "1"
formula = "1/(2*sigma**2)"
source = "Mironov 2017 (arXiv:1702.07476 v3), Table II"
'''

#: The Gaussian mechanism's RDP curve, a correct entry at every order.
GAUSSIAN_ALPHA = '''
[[entry]]
name = "gaussian/alpha-ok"
mechanism = "gaussian"
formula = "alpha/(2*sigma**2)"
source = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 7"
'''


def coin_mechanism_file(name: str = "coin") -> str:
    """The text of a user's mechanism file: ``my_mechanism()`` returns a biased coin (randomized response
    with keep probability q in (1/2, 1)) under ``name``, for the commands' ``--file`` option."""
    return f'''
import sympy as sp
import rdpsym

def my_mechanism() -> rdpsym.Mechanism:
    x = sp.Symbol("x", integer=True, nonnegative=True)
    p = rdpsym.parameter("q", sp.Interval.open(sp.Rational(1, 2), 1), typical=(0.6, 0.9))
    s = p.symbol
    return rdpsym.Mechanism({name!r}, x, sp.FiniteSet(0, 1),
                            (rdpsym.AdjacentPair(s**x * (1 - s)**(1 - x), (1 - s)**x * s**(1 - x)),), (p,))
'''
