package lldp

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/mdlayher/packet"
	"golang.org/x/net/bpf"
)

// Sender announces an Advert on one interface, as a switch port would. It is meant for switch emulation in
// tests and demos.
type Sender struct {
	ifi   *net.Interface
	conn  *packet.Conn
	frame []byte
}

// dropAll is a socket filter that accepts no frame: a Sender only writes.
var dropAll = mustAssemble(bpf.RetConstant{Val: 0})

func mustAssemble(insns ...bpf.Instruction) []bpf.RawInstruction {
	raw, err := bpf.Assemble(insns)
	if err != nil {
		panic(fmt.Sprintf("lldp: assemble BPF filter: %v", err))
	}
	return raw
}

// NewSender opens an AF_PACKET socket on ifi for sending a's frame, with ifi's MAC as source. The socket
// lives in the network namespace of the calling OS thread. It needs CAP_NET_RAW.
func NewSender(ifi *net.Interface, a Advert) (*Sender, error) {
	frame, err := a.Frame(ifi.HardwareAddr)
	if err != nil {
		return nil, fmt.Errorf("LLDP sender on %s: %w", ifi.Name, err)
	}
	conn, err := packet.Listen(ifi, packet.Raw, EtherType, &packet.Config{Filter: dropAll})
	if err != nil {
		return nil, fmt.Errorf("open LLDP send socket on %s: %w", ifi.Name, err)
	}
	return &Sender{ifi: ifi, conn: conn, frame: frame}, nil
}

// Send sends the frame once.
func (s *Sender) Send() error {
	if _, err := s.conn.WriteTo(s.frame, &packet.Addr{HardwareAddr: NearestBridge}); err != nil {
		return fmt.Errorf("send LLDP on %s: %w", s.ifi.Name, err)
	}
	return nil
}

// Run sends the frame at once and then every interval until ctx ends, when it returns nil.
func (s *Sender) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return fmt.Errorf("LLDP sender on %s: interval %v is not positive", s.ifi.Name, interval)
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		if err := s.Send(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Close closes the socket.
func (s *Sender) Close() error { return s.conn.Close() }
