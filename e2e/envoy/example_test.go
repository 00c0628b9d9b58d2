package envoy_test

import (
	"fmt"
	"strings"

	"github.com/warmroute/warmroute/e2e/envoy"
)

func ExampleRender() {
	conf, err := envoy.Render(envoy.FullDuplex, envoy.Params{
		ListenPort: 8080, // clients
		AdminPort:  9901, // Envoy's admin API
		RouterPort: 9002, // warmroute serve --grpc-addr
	})
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(conf), "\n") {
		if strings.Contains(line, "request_body_mode") {
			fmt.Println(strings.TrimSpace(line))
		}
	}
	// Output: request_body_mode: FULL_DUPLEX_STREAMED
}
