// Command benchbare is the baseline of `make bench`: a bare net/http server
// answering every request with the same small JSON object, measured with the
// same load settings as the local runner (infra/bench.sh). It listens on
// 127.0.0.1:$PORT (0 picks a free port) and prints its address on stdout.
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// body is about the size of a redirect response.
var body = []byte(`{"redirect":{"id":1,"path":"/bench","target":"/target"}}` + "\n")

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Fatal(srv.Serve(ln))
}
