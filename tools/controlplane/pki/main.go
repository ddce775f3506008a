// Command pki writes the credentials of a loopback test control plane into one directory:
//
//	ca.crt ca.key            the cluster CA (signs the serving and client certificates)
//	apiserver.crt/.key       kube-apiserver's serving certificate for 127.0.0.1 and localhost
//	admin.crt/.key           a client certificate for user "admin" in group system:masters
//	sa.key sa.pub            the ServiceAccount token signing key pair
//
// and, with issue, one more certificate signed by the CA in DIR (for a component that serves or calls with
// TLS: an aggregated API server, a webhook, an estimator, a client in a group):
//
//	pki issue DIR NAME -cn CN [-org O,...] [-dns NAME,...] [-ip IP,...] [-usage server|client|both]
//
// Usage: pki DIR | pki issue DIR NAME ...
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const validity = 10 * 365 * 24 * time.Hour

func main() {
	var err error
	switch {
	case len(os.Args) >= 4 && os.Args[1] == "issue":
		err = issueNamed(os.Args[2], os.Args[3], os.Args[4:])
	case len(os.Args) == 2:
		err = write(os.Args[1])
	default:
		fmt.Fprintln(os.Stderr, "usage: pki DIR | pki issue DIR NAME -cn CN [-org O,...] [-dns N,...] [-ip IP,...] [-usage server|client|both]")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

// issueNamed writes DIR/NAME.crt and DIR/NAME.key, signed by DIR/ca.crt and DIR/ca.key.
func issueNamed(dir, name string, args []string) error {
	flags := flag.NewFlagSet("issue", flag.ContinueOnError)
	cn := flags.String("cn", "", "the subject's common name (the user, for a client certificate)")
	orgs := flags.String("org", "", "comma-separated organisations (the groups, for a client certificate)")
	dns := flags.String("dns", "", "comma-separated DNS names the certificate serves")
	ips := flags.String("ip", "", "comma-separated IP addresses the certificate serves")
	usage := flags.String("usage", "both", "server, client or both")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *cn == "" {
		return errors.New("issue: -cn is required")
	}
	ca, caKey, err := readCA(dir)
	if err != nil {
		return err
	}
	cert := template(pkix.Name{CommonName: *cn, Organization: split(*orgs)})
	switch *usage {
	case "server":
		cert.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	case "client":
		cert.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case "both":
		cert.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	default:
		return fmt.Errorf("issue: -usage %q is not server, client or both", *usage)
	}
	cert.DNSNames = split(*dns)
	for _, text := range split(*ips) {
		ip := net.ParseIP(text)
		if ip == nil {
			return fmt.Errorf("issue: -ip %q is not an IP address", text)
		}
		cert.IPAddresses = append(cert.IPAddresses, ip)
	}
	return issue(dir, name, cert, ca, caKey)
}

func readCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, nil, err
	}
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, nil, fmt.Errorf("%s: ca.crt or ca.key holds no PEM block", dir)
	}
	ca, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return ca, key, nil
}

func split(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTemplate := template(pkix.Name{CommonName: "binding-scheduler-test-ca"})
	caTemplate.IsCA = true
	caTemplate.BasicConstraintsValid = true
	caTemplate.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writeCert(dir, "ca", caDER, caKey); err != nil {
		return err
	}

	serving := template(pkix.Name{CommonName: "kube-apiserver"})
	serving.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serving.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
	serving.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	if err := issue(dir, "apiserver", serving, ca, caKey); err != nil {
		return err
	}

	admin := template(pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}})
	admin.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if err := issue(dir, "admin", admin, ca, caKey); err != nil {
		return err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))
}

func template(subject pkix.Name) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now().Add(-time.Hour)
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    now,
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
}

func issue(dir, name string, cert, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, cert, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	return writeCert(dir, name, der, key)
}

func writeCert(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", keyDER)
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}
