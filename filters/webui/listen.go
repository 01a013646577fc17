package webui

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"time"
)

// Hosts are the Host values the server answers to: the address it
// prints (127.0.0.1 when it listens on every address) and its loopback
// names, the address as given (a name), and those allow adds.
func Hosts(given string, addr *net.TCPAddr, allow []string) []string {
	hosts := loopbackHosts(URLHost(addr))
	if !slices.Contains(hosts, addr.String()) {
		hosts = append(hosts, addr.String())
	}
	if host, _, err := net.SplitHostPort(given); err == nil && host != "" && net.ParseIP(host) == nil {
		hosts = append(hosts, net.JoinHostPort(host, fmt.Sprint(addr.Port)))
	}
	return append(hosts, allow...)
}

// URLHost is the host:port a browser reaches addr at.
func URLHost(addr *net.TCPAddr) string {
	if addr.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", fmt.Sprint(addr.Port))
	}
	return addr.String()
}

// OpenBrowser opens url in the default browser, without waiting for it.
func OpenBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// Serve serves h on ln until it fails, or until ctx is done: then it
// shuts the server down (giving requests in flight two seconds) and
// returns nil, a clean end.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(shut)
		return nil
	}
}
