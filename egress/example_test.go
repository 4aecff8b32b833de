package egress_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/corralhq/corral/egress"
)

func ExampleParseRules() {
	_, err := egress.ParseRules([]string{"github.com", "*.github.com:443", "10.0.0.1"}, nil, nil)
	fmt.Println(err)
	// Output: egress: allowed domain "10.0.0.1": an IP address, not a name: give its range as an allowed IP
}

// A client refused by the proxy sees the reason in its error.
func ExampleProxy_ServeHTTPProxy() {
	rules, _ := egress.ParseRules([]string{"github.com"}, nil, nil)
	p, _ := egress.New(egress.Options{
		Rules:     rules,
		OnRefusal: func(r egress.Refusal) { fmt.Println("refused:", r.Host, r.Port, r.Reason) },
	})
	defer p.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go p.ServeHTTPProxy(l)

	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: l.Addr().String()})}}
	_, err := client.Get("https://evil.example/")
	fmt.Println(err)
	// Output:
	// refused: evil.example 443 not in allowed domains
	// Get "https://evil.example/": corral: blocked evil.example:443 (not in allowed domains)
}
