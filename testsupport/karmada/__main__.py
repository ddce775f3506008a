import sys

from testsupport.karmada.cli import main

sys.exit(main(sys.argv[1:]))
