from pedit.cli import main

main()
