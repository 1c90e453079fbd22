module mqconform.example/goqm

go 1.19
