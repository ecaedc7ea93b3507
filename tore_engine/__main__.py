import sys

from tore_engine.cli import main

sys.exit(main())
