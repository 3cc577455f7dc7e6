from mqspec.cli import main

main()
