// zerodrop-kube: upstream Kubernetes' control-plane components, kube-proxy, kubectl and etcd in one
// multi-call binary, built from their Go modules at the release pinned in go.mod.
//
// One binary keeps the cold build to one compile of the shared packages (client-go, apiserver,
// the API types) instead of five. Each component still runs in a process of its own: feature gates,
// flags and metrics registries are process-global in every one of them.
//
// Usage: zerodrop-kube COMPONENT [flags], or a link named for the component (kubectl -> zerodrop-kube).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubectl"}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args
	if !contains(name) {
		if len(os.Args) < 2 || !contains(os.Args[1]) {
			fmt.Fprintf(os.Stderr, "usage: %s COMPONENT [flags]\ncomponents: %s\n", name, strings.Join(components, ", "))
			os.Exit(2)
		}
		name = os.Args[1]
		args = os.Args[1:]
	}
	// Every component parses os.Args itself (cobra, etcd's flag set): drop our own argument.
	os.Args = args
	switch name {
	case "etcd":
		etcdmain.Main(os.Args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kube-proxy":
		os.Exit(cli.Run(proxy.NewProxyCommand()))
	case "kubectl":
		// As kubectl's own main: errors are printed by CheckErr, in kubectl's words and exit codes.
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
	}
}

func contains(name string) bool {
	for _, c := range components {
		if c == name {
			return true
		}
	}
	return false
}
