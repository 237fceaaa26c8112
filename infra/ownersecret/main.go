// Command ownersecret prints the hash of the shop owner's secret, read from
// its standard input, for the template's OwnerSecretHash parameter
// (OWNER_SECRET_HASH): the app authorization page asks the owner for the
// secret before it grants an app any scope, and only the hash is deployed.
//
//	read -rs S && printf %s "$S" | go run ./infra/ownersecret
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/storeadmin/adminapi/shared/auth"
)

func main() {
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(os.Stderr, "ownersecret: give the owner's secret on standard input")
		os.Exit(2)
	}
	hash, err := auth.HashOwnerSecret(strings.TrimRight(line, "\r\n"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ownersecret:", err)
		os.Exit(2)
	}
	fmt.Println(hash)
}
