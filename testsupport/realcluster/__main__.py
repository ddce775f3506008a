import sys

from testsupport.realcluster.controlplane import main

sys.exit(main(sys.argv[1:]))
