# Test fixture: a stand-in of the Neuron SDK's neuronxcc package (see ../../README.md).
