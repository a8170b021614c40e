module github.com/draext/draext

go 1.24.0
