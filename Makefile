# Thin wrapper over scripts/ (the scripts are what the README's Quick start runs).
.PHONY: demo test test-asan build clean
demo:
	./scripts/demo.sh
test:
	./scripts/test.sh
test-asan:
	SANITIZE=1 ./scripts/test.sh
build:
	./scripts/build.sh
clean:
	rm -rf build build-asan
