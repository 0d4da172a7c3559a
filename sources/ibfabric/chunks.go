package ibfabric

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// Chunk is one file of a capture in chunks (see OpenCapture): its name in the capture's folder and its bytes.
type Chunk struct {
	Name string
	Data []byte
}

// ChunkPrefix starts the name of every chunk Chunks makes: capture.gz.00, capture.gz.01, …
const ChunkPrefix = "capture.gz."

// Chunks gzips the capture text r and cuts it into chunks of at most size bytes, named ChunkPrefix and two
// digits from 00 up (as `gzip -c | split -b SIZE -d - capture.gz.` names them), so that a folder holding them
// (one ConfigMap each, mounted together) reads back as the capture. At most 100 chunks: more is an error
// naming the size that would do.
func Chunks(r io.Reader, size int) ([]Chunk, error) {
	if size <= 0 {
		return nil, fmt.Errorf("chunk size %d is not positive", size)
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(zw, r); err != nil {
		return nil, fmt.Errorf("compressing the capture: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing the capture: %w", err)
	}
	data := gz.Bytes()
	n := (len(data) + size - 1) / size
	if n > 100 {
		return nil, fmt.Errorf("the compressed capture (%d bytes) needs %d chunks of %d bytes: at most 100, give a larger size", len(data), n, size)
	}
	out := make([]Chunk, 0, n)
	for i := 0; i < n; i++ {
		end := min((i+1)*size, len(data))
		out = append(out, Chunk{Name: fmt.Sprintf("%s%02d", ChunkPrefix, i), Data: data[i*size : end]})
	}
	return out, nil
}
