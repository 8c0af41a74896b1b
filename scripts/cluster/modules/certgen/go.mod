module kt.invalid/cluster/certgen

go 1.26
