package discover

import (
	"net/netip"
	"testing"
)

// Rows in the kernel's format (the IPv4 ones as this machine's
// /proc/net/tcp wrote them): listening sockets only, each word of an
// address in host byte order.
func TestParseProcNetTCP(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:B2BF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 177393 2 000000004a0663fd 100 0 0 10 0
   1: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 42 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F40 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 43 1 0000000000000000 20 4 30 10 -1
`
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:2B67 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 77 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 78 1 0000000000000000 100 0 0 10 0
`
	got := append(ParseProcNetTCP([]byte(tcp)), ParseProcNetTCP([]byte(tcp6))...)
	want := []Listener{
		{Addr: netip.MustParseAddr("127.0.0.1"), Port: 0xB2BF, Inode: 177393},
		{Addr: netip.MustParseAddr("0.0.0.0"), Port: 8000, Inode: 42},
		// row 2 is an established connection: not a listener
		{Addr: netip.MustParseAddr("::1"), Port: 11111, Inode: 77},
		{Addr: netip.MustParseAddr("127.0.0.1"), Port: 3000, Inode: 78}, // IPv4-mapped
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
