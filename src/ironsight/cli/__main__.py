from ironsight.cli.main import main

main()
