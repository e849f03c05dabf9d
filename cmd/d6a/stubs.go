package main

// Placeholders replaced by their own files as the subcommands land.

func cmdServe(args []string) int  { return notYet("serve") }
func cmdReplay(args []string) int { return notYet("replay") }
func cmdVerify(args []string) int { return notYet("verify") }
func cmdToken(args []string) int  { return notYet("token") }

func notYet(name string) int {
	println("d6a " + name + ": not built yet")
	return 1
}
