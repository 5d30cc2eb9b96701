package dial

import (
	"strings"

	"google.golang.org/grpc/resolver"
)

// hostsScheme resolves a TEMPORAL_ADDRESS that lists several frontends ("a:7233,b:7233"): the
// nodes of one cluster without a load balancer or DNS name in front. The SDK balances its calls
// round-robin over what a resolver returns, and a node that stops answering drops out of the
// rotation until it is back (gRPC's own health of each connection).
const hostsScheme = "baton-hosts"

func init() { resolver.Register(hostsBuilder{}) }

// Target is the gRPC target of a TEMPORAL_ADDRESS: one host:port as it is, several through the
// static resolver.
func Target(address string) string {
	if !strings.Contains(address, ",") {
		return address
	}
	return hostsScheme + ":///" + address
}

type hostsBuilder struct{}

func (hostsBuilder) Scheme() string { return hostsScheme }

func (hostsBuilder) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	var addrs []resolver.Address
	for _, a := range strings.Split(target.Endpoint(), ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, resolver.Address{Addr: a})
		}
	}
	return hostsResolver{}, cc.UpdateState(resolver.State{Addresses: addrs})
}

// hostsResolver's list never changes: nothing to re-resolve.
type hostsResolver struct{}

func (hostsResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (hostsResolver) Close()                                {}
