# on the TPU machine: the index's packages (pandas, matplotlib, scipy, flax, optax) and the carried wheels into /tmp/site
D=$(dirname "$0")
PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --only-binary=:all: --no-cache-dir --index-url file:///opt/pypi/simple \
  --find-links "$D" --target /tmp/site hydra-core omegaconf cloudpickle ruptures plotly threadpoolctl pandas matplotlib scipy flax optax equinox rich tqdm 2>&1 | grep -v notice
PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site "$D"/jitexp-*.whl 2>&1 | grep -v notice
true
