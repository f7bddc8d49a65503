from pedit.cli.app import main

main()
