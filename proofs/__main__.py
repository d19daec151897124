"""``python -m proofs [--check] [--only SLUG ...]``: regenerate (or check) every certificate."""
import argparse
import sys

from . import PROOFS, check, load


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m proofs", description=__doc__)
    ap.add_argument("--check", action="store_true", help="compare with the committed certificates instead of writing")
    ap.add_argument("--only", nargs="*", default=None, help="slugs to run")
    args = ap.parse_args(argv)
    bad = 0
    for slug in args.only or PROOFS:
        if args.check:
            diffs = check(slug)
            print(f"{slug}: {'up to date' if not diffs else 'DIFFERS'}")
            for d in diffs:
                print("   ", d)
            bad += bool(diffs)
        else:
            cert = load(slug).prove()
            print(f"{slug}: wrote {cert.write()} ({', '.join(f'{k}: {v}' for k, v in cert.verdicts.items())})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
