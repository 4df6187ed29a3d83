// Command bao runs the upstream OpenBao CLI/server (github.com/openbao/openbao/command), v2.6.2.
package main

import (
	"os"

	"github.com/openbao/openbao/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:]))
}
