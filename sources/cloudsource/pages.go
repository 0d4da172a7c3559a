package cloudsource

import (
	"crypto/sha256"
	"fmt"
)

// Pages follows the page tokens of one paged listing (one call's pages, or one zone's): a token that came
// before would read the same pages again, or end the listing early where an SDK's paginator stops on it, and
// so leave Nodes silently "not in the answer"; Pages refuses it, and a token past MaxTokenBytes or more pages
// than the bound. It keeps a digest of each token, not the token.
type Pages struct {
	// What names the listing in errors: the provider's call and where ("aws: DescribeInstanceTopology of 100
	// instances (i-0a…)").
	What string
	// Max bounds the pages; zero: no bound.
	Max int

	read int
	seen map[[sha256.Size]byte]int // token digest → the page that gave it
}

// Next records that the page just read gave token as the next one (empty: the last page) and returns an error
// wrapping ErrRefused when the listing must end: a token seen before, a token too long, or more pages than Max.
func (p *Pages) Next(token string) error {
	p.read++
	if token == "" {
		return nil
	}
	if len(token) > MaxTokenBytes {
		return fmt.Errorf("%s: page %d gave a page token of %d bytes, over the limit of %d bytes: %w", p.What, p.read, len(token), MaxTokenBytes, ErrRefused)
	}
	sum := sha256.Sum256([]byte(token))
	if first, again := p.seen[sum]; again {
		return fmt.Errorf("%s: page %d gave the page token page %d gave (%q): the listing would go round: %w", p.What, p.read, first, Short(token), ErrRefused)
	}
	if p.Max > 0 && p.read >= p.Max {
		return fmt.Errorf("%s: still paging after %d pages: %w", p.What, p.Max, ErrRefused)
	}
	if p.seen == nil {
		p.seen = map[[sha256.Size]byte]int{}
	}
	p.seen[sum] = p.read
	return nil
}

// Read returns how many pages were read.
func (p *Pages) Read() int { return p.read }
