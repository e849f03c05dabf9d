package main

// Placeholders replaced by their own files as the subcommands land.

func notYet(name string) int {
	println("d6a " + name + ": not built yet")
	return 1
}
