import sys

from tests.karmada.cli import main

sys.exit(main(sys.argv[1:]))
