package discover

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Listener is one listening TCP socket of /proc/net/tcp or tcp6.
type Listener struct {
	Addr  netip.Addr
	Port  int
	Inode uint64
}

// tcpListen is the kernel's TCP_LISTEN state, as /proc/net/tcp writes it.
const tcpListen = "0A"

// ParseProcNetTCP reads the listening sockets of one /proc/net/tcp or
// tcp6 table. Rows it cannot read are skipped (the format is the kernel's
// and stable; a bad row is no reason to lose the others).
func ParseProcNetTCP(b []byte) []Listener {
	var out []Listener
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		addr, port, err := parseHexAddr(f[1])
		if err != nil {
			continue
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, Listener{Addr: addr, Port: port, Inode: inode})
	}
	return out
}

// parseHexAddr reads "0100007F:1F40" (IPv4) or a 32-digit IPv6 address:
// the kernel prints each 32-bit word in host (little-endian) order.
func parseHexAddr(s string) (netip.Addr, int, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.Addr{}, 0, fmt.Errorf("address %q: no port", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.Addr{}, 0, err
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.Addr{}, 0, fmt.Errorf("address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return addr.Unmap(), int(port), nil
}
