/**
 * @module RocketMQ 5's gRPC endpoint on AWS, when the stage sets `grpc` (lib/config/stages.ts; docs/grpc.md):
 * `nimbus proxy` as an ECS Fargate service (arm64, the smallest task: 0.25 vCPU, 0.5 GB) behind a Network
 * Load Balancer that ends TLS on 443 with the stage's ACM certificate (ALPN: HTTP/2 only, which gRPC needs)
 * and passes the HTTP/2 streams over TCP to the task's port 8081. The task is linked to exactly the tables,
 * bucket and functions of `GRPC_PROXY` (manifest.ts), as a function is, and to AUTH_TABLE on a stage with ACLs:
 * a send to a subscribed topic invokes Dispatch (NIMBUS_DISPATCH_FUNCTION), as the Send function's does.
 * With `grpc.remoting` the same tasks serve RocketMQ 4.x's remoting protocol (docs/remoting.md): a listener and
 * target group per broker from port 9876 (`remotingPorts`), each port the same on the balancer and the task,
 * named in the door's routes as `<domain>:<port>`; the task's security group (SST's VPC default) already admits
 * the VPC's addresses on every port, so the balancer reaches them; the task also gets the offsets table.
 * Standing cost (docs/cost.md): the task, the load balancer and the VPC's NAT instance run by the hour,
 * requests or not; hence off by default.
 */
import { dispatchFunction } from "./api.js";
import { aclSecrets } from "./auth.js";
import { settings } from "./config.js";
import { AUTH_TABLE, GRPC_PROXY, REMOTING_PORT, REMOTING_PROXY, remotingPorts } from "./manifest.js";
import { bucket, table, tableNamesJson } from "./storage.js";

const grpc = settings.grpc;

export const grpcEndpoint = grpc === undefined ? undefined : createGrpcService(grpc);

function createGrpcService(options: NonNullable<typeof grpc>) {
  // The ACL check of every call reads users and ACLs, on a stage with ACLs only (`--auth`).
  // The remoting door's consumers keep offsets on the broker (REMOTING_PROXY), on a stage that serves it.
  const served = options.remoting ? [...GRPC_PROXY.tables, ...REMOTING_PROXY.tables] : GRPC_PROXY.tables;
  const tables = aclSecrets ? [...served, AUTH_TABLE] : served;
  // RocketMQ 4.x clients dial each broker at an address of its own: a listener per broker, the same port on the
  // balancer and the task (the door names `<domain>:<port>` in its routes), TLS ended by the balancer or not.
  const remotingProtocol = options.remoting;
  const remoting = remotingProtocol ? remotingPorts(settings.nimbus) : [];
  // A linked function grants `lambda:InvokeFunction` on it alone. Absent on a slave cell (delivery is the master's).
  const dispatch = GRPC_PROXY.invokes.includes("Dispatch") ? dispatchFunction : undefined;
  // One NAT instance (fck-nat on t4g.nano) instead of a managed NAT gateway: the task reaches DynamoDB, S3 and
  // ECR through it for a few dollars a month instead of about $33 (docs/cost.md).
  const vpc = new sst.aws.Vpc("GrpcVpc", { az: 2, nat: "ec2" });
  const cluster = new sst.aws.Cluster("GrpcCluster", { vpc });
  const service = new sst.aws.Service("GrpcProxy", {
    cluster,
    architecture: "arm64",
    cpu: "0.25 vCPU",
    memory: "0.5 GB",
    scaling: { min: options.tasks, max: options.tasks },
    image: { context: ".", dockerfile: "infra/grpc.Dockerfile" },
    command: [
      "node",
      "dist/lib/cli/main.js",
      "proxy",
      "--host",
      "0.0.0.0",
      "--port",
      "8081",
      "--storage",
      "aws",
      "--stage",
      $app.stage,
      "--advertised-host",
      options.domain,
      ...(options.remoting ? ["--remoting-port", String(REMOTING_PORT)] : []),
      // The load balancer ends TLS (443/tls below); the task's port is reachable from inside the VPC only (its
      // security group, SST's VPC default, admits the VPC's CIDR alone, though the task has a public IP).
      "--tls-offloaded",
      // One process: a quarter vCPU is not a core to fill, and one process merges every connection's sends to a
      // queue into one append and every queue's batches into one shared object (docs/cost.md).
      "--workers",
      "1",
      ...(aclSecrets ? ["--auth"] : ["--insecure"]),
    ],
    link: [...tables.map(table), ...(GRPC_PROXY.bucket ? [bucket] : []), ...(dispatch ? [dispatch] : [])],
    environment: {
      AWS_REGION: settings.region,
      NIMBUS_BUCKET: bucket.name,
      NIMBUS_TABLES: tableNamesJson,
      // The send-time wake of subscription delivery (lib/config/dispatch-wake.ts; `--dispatch-function`).
      ...(dispatch ? { NIMBUS_DISPATCH_FUNCTION: dispatch.name } : {}),
      ...(aclSecrets
        ? {
            NIMBUS_ACL_MASTER_KEY: aclSecrets.masterKey.value,
            NIMBUS_ROOT_USER: "root",
            NIMBUS_ROOT_PASSWORD: aclSecrets.rootPassword.value,
          }
        : {}),
    },
    loadBalancer: {
      domain: { name: options.domain, cert: options.certificateArn, dns: false },
      rules: [
        { listen: "443/tls", forward: "8081/tcp" },
        ...remoting.map(({ port }) => ({
          listen: `${port}/${remotingProtocol ?? "tcp"}` as const,
          forward: `${port}/tcp` as const,
        })),
      ],
    },
    logging: { retention: settings.production ? "3 months" : "1 week" },
    transform: {
      // gRPC needs HTTP/2 end to end: its TLS listener negotiates h2 only (the remoting listeners no ALPN).
      listener: (args) => {
        if (args.port === 443) args.alpnPolicy = "HTTP2Only";
      },
    },
  });
  return {
    url: $interpolate`${options.domain}:443`,
    loadBalancer: service.url,
    // 4.x clients' `namesrvAddr` (with `useTLS` on a `tls` stage).
    remoting: remoting[0] && `${options.domain}:${remoting[0].port}`,
  };
}
