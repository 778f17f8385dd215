package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/probe"
)

// targetFlags are how every command that takes targets finds endpoints it
// was not given as URLs: this machine's engines when nothing is given
// (discovery), another host's through ssh:// targets. One home, so
// dashboard, snapshot, exporter, serve, probe and check find alike.
type targetFlags struct {
	disc discoverFlags
	ssh  sshFlags
	kube kubeFlags
}

func (t *targetFlags) bind(fs *pflag.FlagSet) {
	t.disc.bind(fs)
	t.ssh.bind(fs)
	t.kube.bind(fs)
}

// addFound adds to c the endpoints found in the Kubernetes cluster
// (--kube or the file's kube section), on the ssh:// hosts and, when
// local is set (nothing else was given), on this machine.
func (t *targetFlags) addFound(c *config.Config, sshTargets []string, local bool, p probe.Settings, model, api string, noScrape bool) error {
	if s := t.kube.settings(c.Kube); s.Enabled {
		if err := t.kube.addPods(c, s, p, model, api, noScrape); err != nil {
			return err
		}
		local = false
	}
	if local && !t.disc.off {
		if err := t.disc.discoverInto(c, p, model, api, noScrape); err != nil {
			return err
		}
	}
	if len(sshTargets) == 0 {
		return nil
	}
	ports, err := t.disc.portList()
	if err != nil {
		return err
	}
	return t.ssh.addHosts(c, sshTargets, ports, p, model, api, noScrape)
}

// report says on w what was found here and on each host.
func (t *targetFlags) report(w io.Writer) {
	t.disc.report(w)
	t.ssh.report(w)
	t.kube.report(w)
}

// close closes the SSH connections (the monitoring commands hand them to
// the monitor instead).
func (t *targetFlags) close() error {
	var errs []error
	for _, h := range t.ssh.hosts {
		errs = append(errs, h.Close())
	}
	return errors.Join(errs...)
}

// foundProbe is the probe options of a found endpoint: the command's own
// (base) with the endpoint's URL, API (unless --api), tunnel and labels.
func foundProbe(base probe.Options, ep config.Endpoint) probe.Options {
	o := base
	o.URL, o.API, o.Dial, o.Transport = ep.URL, cmp.Or(o.API, probe.API(ep.API)), ep.Dial, ep.Transport
	o.Labels = ep.FoundLabels()
	return o
}

// find resolves a probing command's targets that are not URLs: the
// ssh:// ones, or with none this machine's engines. Finding no LLM server
// is a usage error; the caller closes t.
func (t *targetFlags) find(sshTargets []string, stderr io.Writer) ([]config.Endpoint, error) {
	local := len(sshTargets) == 0 && !t.kube.set.Enabled
	if local && t.disc.off {
		return nil, usagef("nothing to measure: %s", noTargetUsage)
	}
	var c config.Config
	err := t.addFound(&c, sshTargets, local, probe.Settings{}, "", "", false)
	t.report(stderr) // also when nothing was found: what was left alone
	if err != nil {
		return nil, err
	}
	if len(c.Endpoints) == 0 {
		where := "this machine"
		if t.kube.cluster != nil {
			where = t.kube.cluster.Where()
		}
		if !local && len(sshTargets) > 0 {
			where = strings.Join(sshTargets, ", ")
		}
		return nil, usagef("nothing to measure: no LLM server found on %s; %s", where, noTargetUsage)
	}
	return c.Endpoints, nil
}

// findOne is base aimed at one endpoint found on the ssh:// hosts or,
// with none, on this machine: the first found (in discovery's order),
// saying on stderr which when there were several. For probe and sweep,
// which measure one endpoint.
func (t *targetFlags) findOne(base probe.Options, sshTargets []string, stderr io.Writer) (probe.Options, error) {
	found, err := t.find(sshTargets, stderr)
	if err != nil {
		return base, err
	}
	if len(found) > 1 {
		if _, err := fmt.Fprintf(stderr, "ttftop: found %d LLM servers (%s); measuring %s; give its URL to choose another\n",
			len(found), foundNames(found), found[0].URL); err != nil {
			return base, err
		}
	}
	return foundProbe(base, found[0]), nil
}

// foundNames lists found endpoints for a message.
func foundNames(eps []config.Endpoint) string {
	s := make([]string, len(eps))
	for i, ep := range eps {
		s[i] = cmp.Or(ep.Name, ep.URL)
		if ep.Found != "" {
			s[i] += fmt.Sprintf(" (%s)", ep.Found)
		}
	}
	return strings.Join(s, ", ")
}
