"""``rdpsym account``: compose mechanisms and print the (epsilon, delta) guarantee of the composition."""

from __future__ import annotations

import math
import re

import click

from . import main
from ._console import output, progress
from ._exit import ExitCode
from ._json import emit, json_option
from ._params import name_values

# a decimal number (optionally with exponent) or a fraction of two such numbers; nothing else is read
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_number(text: str, where: str) -> float:
    """A finite number from ``text`` ("1.1", "2e-3", "1/3"): never eval, no names, no expressions."""
    t = text.strip()
    parts = t.split("/")
    if len(parts) > 2 or not all(_NUMBER.match(p.strip()) for p in parts):
        raise click.BadParameter(f"{where}: {text!r} is not a number (use e.g. 1.1, 2e-3 or 1/3)", param_hint="--add")
    # float() reads "1e999999999" as inf at once; Fraction would build the integer 10**999999999
    nums = [float(p) for p in parts]
    if not all(math.isfinite(v) for v in nums):
        raise click.BadParameter(f"{where}: {text!r} is not a finite float64 number", param_hint="--add")
    if len(nums) == 2 and nums[1] == 0:
        raise click.BadParameter(f"{where}: {text!r} divides by zero", param_hint="--add")
    value = nums[0] / nums[1] if len(nums) == 2 else nums[0]
    if not math.isfinite(value):
        raise click.BadParameter(f"{where}: {text!r} is not a finite float64 number", param_hint="--add")
    return value


def split_event(spec: str) -> tuple[str, str]:
    """``--add SPEC`` as (mechanism, values text): the values follow the *last* ``:`` when that part
    contains ``=`` (or is empty); a registered name before the first ``:`` keeps ``NAME:VALUES`` as it was.

    ``gaussian:sigma=1.1`` -> ("gaussian", "sigma=1.1"); ``my.py:sigma=2`` -> ("my.py", "sigma=2");
    ``my.py:noise:s=2`` and ``pkg.mod:noise:s=2`` -> (".../...:noise", "s=2"); ``pkg.mod:noise`` -> itself, "".
    """
    from .. import mechanisms

    head, sep, rest = spec.partition(":")
    if not sep or head.strip() in mechanisms.names():
        return head.strip(), rest
    mech, _, last = spec.rpartition(":")
    if "=" in last or not last.strip():
        return mech.strip(), last
    return spec.strip(), ""


def parse_event(spec: str) -> tuple[str, dict[str, float]]:
    """``"gaussian:sigma=1.1,sensitivity=2"`` -> ("gaussian", {"sigma": 1.1, "sensitivity": 2.0}); the
    mechanism part may also be a file or ``package.module:attribute`` (see :func:`split_event`)."""
    name, rest = split_event(spec)
    if not name:
        raise click.BadParameter(f"expected MECHANISM[:NAME=VALUE,...]; got {spec!r}", param_hint="--add")
    items = filter(None, (s.strip() for s in rest.split(",")))
    texts = name_values(items, "--add", context=f"{spec!r}: ", unique=True)
    return name, {key: parse_number(text, f"{name}: {key}") for key, text in texts.items()}


class _ConversionChoice(click.Choice):
    """The registered conversions (:mod:`rdpsym.accounting.conversions`), read when the command runs, so
    a conversion registered after this module was imported is offered too."""

    name = "conversion"

    def __init__(self):
        super().__init__(())

    @property
    def choices(self):
        from ..accounting import conversions

        return tuple(conversions.names())

    @choices.setter
    def choices(self, _value):
        pass  # always the registry's


class _OrderedCommand(click.Command):
    """Records the order of --add and --count on the command line (each --count follows its --add)."""

    def parse_args(self, ctx, args):
        order = []
        for tok in args:
            if tok == "--":
                break
            for opt in ("--add", "--count"):
                if tok == opt or tok.startswith(opt + "="):
                    order.append(opt)
        ctx.meta["account_order"] = order
        return super().parse_args(ctx, args)


def pair_counts(order: list[str], adds: tuple[str, ...], counts: tuple[int, ...]) -> list[tuple[str, int]]:
    """Each --add with the --count right after it (default 1)."""
    out: list[list] = []
    ia = ic = 0
    for opt in order:
        if opt == "--add":
            out.append([adds[ia], 1, False])
            ia += 1
        else:
            if not out or out[-1][2]:
                raise click.BadParameter("each --count must follow an --add (and at most one per --add)",
                                         param_hint="--count")
            out[-1][1], out[-1][2] = counts[ic], True
            ic += 1
    if ia != len(adds) or ic != len(counts):  # the token scan and click disagree (odd quoting): refuse
        raise click.BadParameter("could not match each --count to its --add; write them as '--add SPEC --count N'",
                                 param_hint="--count")
    return [(a, c) for a, c, _ in out]


@main.command(cls=_OrderedCommand)
@click.option("--add", "adds", multiple=True, metavar="MECHANISM:NAME=VALUE,...",
              help="An event: a mechanism and its parameter values, e.g. gaussian:sigma=1.1 (sensitivity "
                   "defaults to 1). MECHANISM is a registered name, path/to/file.py[:name] or "
                   "package.module:attribute, or a stated guarantee: zcdp:rho=R[,xi=X] or "
                   "tcdp:rho=R,omega=W. The values follow its last ':'. Repeatable.")
@click.option("--count", "counts", multiple=True, type=click.IntRange(min=0), metavar="N",
              help="How many times the preceding --add is released (default 1).")
@click.option("--delta", type=float, default=None, help="Report the smallest epsilon for this delta in (0, 1).")
@click.option("--epsilon", type=float, default=None, help="Report the smallest delta for this epsilon >= 0.")
@click.option("--group", type=click.IntRange(min=1), default=1, show_default=True,
              help="Group privacy: inputs differing in this many records (Mironov 2017, Prop. 2 where not exact).")
@click.option("--method", type=_ConversionChoice(), default="improved", show_default=True,
              help="RDP -> (epsilon, delta) conversion, one of rdpsym.accounting.conversions: improved "
                   "(CKS20 Prop. 12), mironov (Mironov 2017 Prop. 3), or any registered one.")
@click.option("--markdown", is_flag=True, help="Print the report as Markdown.")
@click.option("--tight", is_flag=True,
              help="Certified tight bounds from privacy loss distributions of the densities (instead of RDP): "
                   "a lower and an upper bound on the exact epsilon (or delta) of the composition.")
@click.option("--step", type=float, default=1e-4, show_default=True,
              help="With --tight: the grid step of the privacy loss.")
@json_option
@click.pass_context
def account(ctx, adds, counts, delta, epsilon, group, method, markdown, as_json, tight=False, step=1e-4):
    """Compose mechanisms (Mironov 2017, Prop. 1) and convert to (epsilon, delta)-DP.

    Example: rdpsym account --add gaussian:sigma=1.1 --count 1000 --add laplace:b=2 --delta 1e-5

    A mechanism may be a user's file or module: --add my_noise.py:sigma=2, --add my_noise.py:noise:sigma=2
    (the file's function `noise`), --add my_package.noises:noise:sigma=2. The parameter values follow
    the last ':' (they contain '='); a registered name before the first ':' is read as it always was.

    Each --count applies to the --add before it. The curves are the engine's closed forms (stable
    float code), numeric curves where there is none, or bounds (group privacy); the conversion is
    optimised over continuous alpha and the pure-DP order. Prints epsilon (or delta), the optimal
    alpha, the mechanism dominating the curve there and a table of the events. Values are read as
    numbers only. Exit code 1 when no finite guarantee follows (epsilon = inf). With --json: the
    guarantee and the events (schema rdpsym/1, docs/json.md).
    """
    from ..accounting.accountant import Accountant

    if not adds:
        raise click.UsageError("give at least one --add MECHANISM:NAME=VALUE")
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta and --epsilon")
    events = pair_counts(ctx.meta.get("account_order", []), adds, counts)
    acct = Accountant(group_size=group, method=method)
    resolved = {}
    with progress("preparing the curves", total=len(events), enabled=not as_json) as bar:
        _add_events(acct, events, resolved, bar)
    if tight:
        _tight(ctx, acct, delta, epsilon, step, as_json)
        return
    try:
        with progress("converting", enabled=not as_json):
            report = acct.report(delta=delta) if delta is not None else acct.report(epsilon=epsilon)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--delta/--epsilon") from None
    code = ExitCode.OK if report.conversion.finite else ExitCode.FAILED
    if as_json:
        c = report.conversion
        emit("account", {**report.as_dict(), "group_size": report.group_size, "note": c.note,
                         "rdp_at_alpha": c.rdp_at_alpha, "pure_epsilon": c.pure_epsilon, "finite": c.finite}, code)
        return
    if markdown:
        click.echo(report.markdown())
    else:
        output().print(report)
    if code:
        ctx.exit(code)


def _add_events(acct, events, resolved, bar):
    """Add each ``(spec, count)`` to the accountant (its curve is prepared here: the slow part)."""
    from .. import mechanisms
    from ..accounting import guarantees

    for spec, n in events:
        bar.advance(spec)
        name, values = parse_event(spec)
        if name not in resolved:  # one Mechanism per spelling: the accountant merges equal ones
            try:
                # a stated guarantee (zcdp, tcdp) by name, unless a mechanism has that name
                resolved[name] = (guarantees.get(name) if name in guarantees.names() and name not in mechanisms.names()
                                  else mechanisms.resolve(name, argument="--add"))
            except ValueError as exc:
                raise click.BadParameter(f"{spec!r}: {exc}", param_hint="--add") from None
        try:
            acct.add(resolved[name], count=n, **values)
        except (ValueError, TypeError, NotImplementedError) as exc:
            raise click.BadParameter(f"{spec!r}: {exc}", param_hint="--add") from None


def _tight(ctx, acct, delta, epsilon, step, as_json):
    """``--tight``: the certified bracket (rdpsym.accounting.pld) printed, or emitted with --json as
    ``epsilon_lower``/``epsilon_upper`` (with --delta) or ``delta_lower``/``delta_upper`` (with --epsilon)."""
    from ..accounting.pld import PLDTimeout, PLDTooLarge

    try:
        with progress("composing privacy loss distributions", enabled=not as_json):
            bound = acct.tight_epsilon(delta, step=step) if delta is not None else acct.tight_delta(epsilon, step=step)
    except (PLDTooLarge, PLDTimeout) as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--delta/--epsilon/--step/--add") from None
    finite = math.isfinite(bound.upper) if bound.kind == "epsilon" else bound.upper < 1
    code = ExitCode.OK if finite else ExitCode.FAILED
    if as_json:
        emit("account", {**bound.as_dict(), "kind": bound.kind, "tight": True, "finite": finite,
                         "events": [{"event": e.label, "count": e.count} for e in acct.events]}, code)
        return
    other = "delta" if bound.kind == "epsilon" else "epsilon"
    click.echo(f"{bound.kind} in [{bound.lower:.10g}, {bound.upper:.10g}] at {other} = {bound.target:g} "
               f"(upper: the guarantee; lower: certified)")
    click.echo(f"method: {bound.method}")
    click.echo("certified: " + ("yes" if bound.upper_certified else
                                "lower bound only (the upper bound rests on a heuristic)" if bound.certified else
                                "NO (estimated masses)"))
    click.echo("error budget (delta): " + ", ".join(f"{k} {v:.3g}" for k, v in bound.budget.items()))
    if code:
        ctx.exit(code)
