import sys

from tests.realcluster.controlplane import main

sys.exit(main(sys.argv[1:]))
