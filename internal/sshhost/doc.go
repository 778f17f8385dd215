// Package sshhost reaches another host's engines through one SSH
// connection, as ssh would connect (~/.ssh/config, the agent, keys,
// known_hosts): it runs discovery's reads of /proc there and carries every
// probe and scrape through the connection (direct-tcpip channels, no local
// port-forwards). A dropped connection makes the host down, with its
// reason, and is redialled with backoff.
package sshhost
