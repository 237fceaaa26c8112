module github.com/storeadmin/adminapi

go 1.26.8

require (
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
