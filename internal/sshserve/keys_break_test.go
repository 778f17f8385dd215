package sshserve

import (
	"os"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// rewrite replaces the authorized-keys file with content and moves its
// modification time forward, so the change is seen even on a filesystem
// with coarse timestamps.
func rewrite(t *testing.T, path string, content []byte, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// An authorized-keys file that breaks while serving fails closed: the old
// keys are not kept (the edit may have been meant to revoke one), every
// login is refused and each refusal says why in the log, and fixing the
// file lets the keys back in without a restart.
func TestBrokenAuthorizedKeysRefusesLoginsLoudly(t *testing.T) {
	f := startServer(t, nil)
	ak := f.srv.opts.AuthorizedKeys
	good := gossh.MarshalAuthorizedKey(f.key.PublicKey())
	client, err := f.dial(f.config(f.key, nil))
	if err != nil {
		t.Fatalf("the authorised key before the edit: %v", err)
	}
	client.Close()

	cases := []struct {
		name, log string
		breakIt   func(mtime time.Time)
	}{
		{"no usable key", "no usable public key", func(mtime time.Time) {
			rewrite(t, ak, []byte("ssh-ed25519 this-is-not-base64 half-pasted\n"), mtime)
		}},
		{"removed", "no such file", func(time.Time) {
			if err := os.Remove(ak); err != nil {
				t.Fatal(err)
			}
		}},
	}
	mtime := time.Now()
	for _, c := range cases {
		mtime = mtime.Add(time.Minute)
		c.breakIt(mtime)
		if client, err := f.dial(f.config(f.key, nil)); err == nil {
			client.Close()
			t.Errorf("%s: the old key still logs in after the file broke", c.name)
		}
		waitLog(t, f, c.log)
		mtime = mtime.Add(time.Minute)
		rewrite(t, ak, good, mtime)
		client, err := f.dial(f.config(f.key, nil))
		if err != nil {
			t.Fatalf("%s: the key after the file was fixed: %v", c.name, err)
		}
		client.Close()
	}
}
