package webui

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
)

// TestHosts: the server answers to the address it prints and its
// loopback names, to the name it was given, and to those allowed.
func TestHosts(t *testing.T) {
	addr := func(s string) *net.TCPAddr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	cases := []struct {
		given, bound string
		allow        []string
		want         []string
	}{
		{"127.0.0.1:0", "127.0.0.1:5000", nil, []string{"127.0.0.1:5000", "localhost:5000"}},
		{"0.0.0.0:8080", "0.0.0.0:8080", []string{"box.lan:8080"}, []string{"127.0.0.1:8080", "localhost:8080", "0.0.0.0:8080", "box.lan:8080"}},
		{"localhost:0", "127.0.0.1:6000", nil, []string{"127.0.0.1:6000", "localhost:6000", "localhost:6000"}},
		{"192.0.2.7:80", "192.0.2.7:80", nil, []string{"192.0.2.7:80"}},
	}
	for _, c := range cases {
		if got := Hosts(c.given, addr(c.bound), c.allow); !slices.Equal(got, c.want) {
			t.Errorf("Hosts(%s, %s) = %q, want %q", c.given, c.bound, got, c.want)
		}
	}
}

// TestServe: the server answers until its context is done, and then ends
// cleanly.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "up") }))
	}()
	res, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "up" {
		t.Errorf("got %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("stopped: %v, want a clean end", err)
	}
}
