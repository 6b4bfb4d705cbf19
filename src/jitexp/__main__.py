from jitexp.cli import main

main()
