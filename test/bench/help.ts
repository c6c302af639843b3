/** @module What `npm run bench -- --help` prints: the suites and their flags (docs/benchmarks.md has the figures). */
export const BENCH_HELP = `npm run bench -- [--suite <name>] [flags]    (figures and how to read them: docs/benchmarks.md)

Suites:
  data (default)      HTTP produce/consume/idle-poll at batches 1, 32, 256, then gRPC, delayed and POP phases
                      --mode local|aws|both  --batches 1,32,256  --seconds 8  --max-messages 100000  --clients 4
                      --polls 400  --flush async|sync|both  --keys  --key-index on|off  --quick
  rocketmq            RocketMQ's gRPC Java client 5.0.8 against Apache RocketMQ 5.3.3 and nimbus dev, alternating;
                      prints msg/s, p50/p99 and the ratio Nimbus / RocketMQ (needs Java 17 and Maven)
                      --max-messages 20000  --rounds 2  --queues 4  --phases sync,async,consume  --workers N  --flush async|sync
                      --brokers rocketmq,nimbus  --protocols grpc,remoting  --no-jit-settle  --warmup 5000  --quick
  proxy-cost          nimbus proxy on the AWS adapters with injected latencies, many producers sending one message
                      a call; AWS requests and dollars per million against Amazon SQS
                      --producers 64  --seconds 20  --queues 8  --s3-put 30/100  --s3-get 15/60  --dynamo 5/15
                      --protocol remoting: the 4.9.8 Java client through --remoting-port instead (sync sends, async
                      sends --producers in flight, --seconds each, then a push consumer), requests per message per phase
  plain-http          stock HTTP clients (Node's fetch, Python's urllib, Go's net/http), open loop, one JSON send
                      per request  --rate 2000  --seconds 10  --plain-clients fetch,urllib[,go]  --flush async|sync
                      --factor 2 (the row at 2x the closed-loop capacity; 0: none)  --overload-client fetch|go
                      --go-pool N (the Go client keeps N connections alive, opens no more; 0: its defaults)
                      --auth (signed; fetch only)  --workers N
  peer                the SDK's produce/consume/end-to-end table, to set beside Redis Streams or NATS
                      --mode  --seconds 8  --rate 2000  --e2e-seconds 10  --url http://127.0.0.1:9876
  lambda-concurrency  independent writers (Lambda containers) on one queue or one topic: conflicts, write units
                      --backends dynamodb-local,dynalite  --writers 1,2,4,...,64  --shapes hot,topic  --seconds
                      --key-limits on|off (DynamoDB's 1,000 WCU/s and 3,000 RCU/s per partition key, default on)
                      --index-keys K (a hot queue's index over K keys, default 1)  --shapes dead (a writer dies)
                      --batch 32 (msgs per append)  --groups 20 (groups tailing the hot queue)  --throttle-base-ms 50  --max-attempts 6
                      --warm-appends 32 (each container's unmeasured appends first)  --hedge-budget 0 (no hedged S3 PUTs)
  overload            nimbus dev in its own process offered multiples of its capacity: refusals and p99
                      --seconds  --senders 64  --connections 256  --factors 2  --health-interval 20  --flush
  json-rate           the JSON send at a fixed rate   --rate 2000  --seconds
  subscription        delivered msg/s to an HTTPS (or --target http) webhook, and after idle
                      --mode  --max-messages 4096  --rate 100  --rate-seconds 10  --idle-seconds 60  --idle-rounds 2
  pop-idle            POP delivery after an idle minute
  --push              the push channel's latency instead of a suite: --push-mode local|aws-latency|both
                      --rates 1,100,2000  --rate-seconds  --idle-seconds 60  --idle-rounds 2
                      --idle-cost-period 2000  --idle-cost-periods 10  --rates-channel on|off
                      --s3-put 30/100  --s3-get 15/60  --dynamo 5/15 (injected AWS latencies, p50/p99 ms)

Profiles (not a suite): npm run bench:profile -- --door http|grpc|remoting [--phase async|sync|consume] [--workers 1]
`;
