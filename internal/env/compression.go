package env

import (
	"fmt"
	"net"
	"strings"

	"go.temporal.io/sdk/client"
)

// EnvCompression names the setting of the gRPC compression to Temporal: auto (the default), gzip
// or none.
const EnvCompression = "BATON_GRPC_COMPRESSION"

// Compression is the compression of a client of address (TEMPORAL_ADDRESS) under setting. auto
// (or empty) is none when every frontend of address is this host or an IP address of a private
// network, gzip otherwise (the SDK's default): on a LAN gzip costs both ends CPU for every task
// and report (about 9 % of a reply's, measured in BENCHMARKS.md) and saves no time; across the
// internet (Temporal Cloud) it saves bandwidth. A host name other than localhost is not resolved
// to decide: set none for a cluster named on a private network.
func Compression(setting, address string) (client.GrpcCompression, error) {
	switch strings.ToLower(strings.TrimSpace(setting)) {
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	case "", "auto":
		for _, a := range strings.Split(address, ",") {
			if !nearby(strings.TrimSpace(a)) {
				return &client.GrpcCompressionGzip{}, nil
			}
		}
		return &client.GrpcCompressionNone{}, nil
	}
	return nil, fmt.Errorf("%s: %q is not auto, gzip or none", EnvCompression, setting)
}

// nearby reports whether hostport names this host or a private network's address.
func nearby(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}
