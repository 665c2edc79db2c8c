"""How a platform delivery becomes a worker's turn: the job, the durable queue between front-ends
and workers, the delivery the current task works on, and which failures the queue retries."""
