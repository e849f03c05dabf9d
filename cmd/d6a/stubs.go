package main

// Placeholders replaced by their own files as the subcommands land.

func cmdVerify(args []string) int { return notYet("verify") }

func notYet(name string) int {
	println("d6a " + name + ": not built yet")
	return 1
}
