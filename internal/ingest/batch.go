package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/store"
)

// Batching: reports that arrive while others are being written wait and are then written together,
// in one transaction and one commit. A lone report is written at once; under load the batches
// grow by themselves, up to maxBatch.
const (
	maxBatch = 64
	// DefaultWriters is how many batches may be written at once.
	DefaultWriters = 4
	// writeTimeout bounds the writing of one batch.
	writeTimeout = 30 * time.Second
)

type writeJob struct {
	rec  store.AgentReport
	res  store.AgentReportResult
	err  error
	done chan struct{}
}

// batcher writes reports in batches. There is no goroutine of its own: the request that finds a
// writer's place free becomes the writer and writes what has queued up until the queue is empty.
type batcher struct {
	write   func(ctx context.Context, rs []store.AgentReport) ([]store.AgentReportResult, error)
	writers int

	mu     sync.Mutex
	queue  []*writeJob
	active int
}

// do writes one report, with whatever else is waiting.
func (b *batcher) do(rec store.AgentReport) (store.AgentReportResult, error) {
	j := &writeJob{rec: rec, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, j)
	lead := b.active < b.writers
	if lead {
		b.active++
	}
	b.mu.Unlock()
	if lead {
		b.drain()
	}
	<-j.done
	return j.res, j.err
}

func (b *batcher) drain() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.active--
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), maxBatch)
		batch := append([]*writeJob(nil), b.queue[:n]...)
		b.queue = append(b.queue[:0], b.queue[n:]...)
		b.mu.Unlock()
		b.flush(batch)
	}
}

func (b *batcher) flush(batch []*writeJob) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	recs := make([]store.AgentReport, len(batch))
	for i, j := range batch {
		recs[i] = j.rec
	}
	res, err := b.write(ctx, recs)
	if err != nil && len(batch) > 1 {
		// One report the database refuses must not cost the others theirs: one by one.
		for _, j := range batch {
			r, err := b.write(ctx, []store.AgentReport{j.rec})
			if err == nil {
				j.res = r[0]
			}
			j.err = err
			close(j.done)
		}
		return
	}
	for i, j := range batch {
		if err != nil {
			j.err = err
		} else {
			j.res = res[i]
		}
		close(j.done)
	}
}
