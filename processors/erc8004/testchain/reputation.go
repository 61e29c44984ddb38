// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package testchain

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// ReputationRegistryMetaData contains all meta data concerning the ReputationRegistry contract.
var ReputationRegistryMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"address\",\"name\":\"identityRegistry\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"}],\"name\":\"FeedbackRevoked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint8\",\"name\":\"score\",\"type\":\"uint8\"},{\"indexed\":true,\"internalType\":\"string\",\"name\":\"indexedTag1\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"endpoint\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"feedbackURI\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"feedbackHash\",\"type\":\"bytes32\"}],\"name\":\"NewFeedback\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"getClients\",\"outputs\":[{\"internalType\":\"address[]\",\"name\":\"\",\"type\":\"address[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"getIdentityRegistry\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"}],\"name\":\"getLastIndex\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"address[]\",\"name\":\"clientAddresses\",\"type\":\"address[]\"},{\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"}],\"name\":\"getSummary\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"count\",\"type\":\"uint64\"},{\"internalType\":\"uint8\",\"name\":\"averageScore\",\"type\":\"uint8\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"uint8\",\"name\":\"score\",\"type\":\"uint8\"},{\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"endpoint\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"feedbackURI\",\"type\":\"string\"},{\"internalType\":\"bytes32\",\"name\":\"feedbackHash\",\"type\":\"bytes32\"}],\"name\":\"giveFeedback\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"},{\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"}],\"name\":\"readFeedback\",\"outputs\":[{\"internalType\":\"uint8\",\"name\":\"score\",\"type\":\"uint8\"},{\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"},{\"internalType\":\"bool\",\"name\":\"isRevoked\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"}],\"name\":\"revokeFeedback\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "ReputationRegistry",
	Bin: "0x60a060405234801561000f575f5ffd5b5060405161129538038061129583398101604081905261002e91610099565b6001600160a01b0381166100885760405162461bcd60e51b815260206004820152601460248201527f6e6f206964656e74697479207265676973747279000000000000000000000000604482015260640160405180910390fd5b6001600160a01b03166080526100c6565b5f602082840312156100a9575f5ffd5b81516001600160a01b03811681146100bf575f5ffd5b9392505050565b6080516111b06100e55f395f818161013301526101e901526111b05ff3fe608060405234801561000f575f5ffd5b506004361061007a575f3560e01c80634ab3ca99116100585780634ab3ca99146100df57806381bbba58146100f2578063bc4d861b14610126578063f2d817591461015d575f5ffd5b80631bae8c361461007e578063232b08101461009357806342dd519c146100bf575b5f5ffd5b61009161008c366004610ae1565b610188565b005b6100a66100a1366004610bfc565b6104be565b6040516100b69493929190610c63565b60405180910390f35b6100d26100cd366004610ca4565b610613565b6040516100b69190610cbb565b6100916100ed366004610d06565b61067c565b610105610100366004610d30565b61071d565b604080516001600160401b03909316835260ff9091166020830152016100b6565b6040516001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001681526020016100b6565b61017061016b366004610e06565b610945565b6040516001600160401b0390911681526020016100b6565b60648a60ff1611156101cd5760405162461bcd60e51b8152602060048201526009602482015268073636f72653e3130360bc1b60448201526064015b60405180910390fd5b604051636caf395f60e11b8152336004820152602481018c90527f00000000000000000000000000000000000000000000000000000000000000006001600160a01b03169063d95e72be90604401602060405180830381865afa158015610236573d5f5f3e3d5ffd5b505050506040513d601f19601f8201168201806040525081019061025a9190610e27565b156102a75760405162461bcd60e51b815260206004820152601960248201527f73656c662d666565646261636b206e6f7420616c6c6f7765640000000000000060448201526064016101c4565b5f8b815260208181526040808320338452825291829020825160808101845260ff8e1681528351601f8d018490048402810184019094528b84529092909182810191908d908d90819084018382808284375f92019190915250505090825250604080516020601f8c018190048102820181019092528a815291810191908b908b90819084018382808284375f9201829052509385525050506020918201819052835460018082018655948252908290208351600490920201805460ff191660ff9092169190911781559082015191929091908201906103869082610ef0565b506040820151600282019061039b9082610ef0565b50606091909101516003909101805460ff19169115159190911790555f8b815260026020908152604080832033845290915290205460ff1661042a575f8b815260026020908152604080832033808552908352818420805460ff191660019081179091558f85528084529184208054928301815584529190922090910180546001600160a01b03191690911790555b5f8b81526020818152604080832033845290915290819020549051610452908b908b90610fae565b6040518091039020336001600160a01b03168d7f31f01d2aa5cdbe0619011211e9ffc39d678bc82e46d60c35953396ae61e896d8848f8f8f8f8f8f8f8f8f8f6040516104a89b9a99989796959493929190610fe5565b60405180910390a4505050505050505050505050565b5f6060805f5f6104cf88888861096c565b8054600382015460018301805493945060ff9283169390926002860192169083906104f990610e61565b80601f016020809104026020016040519081016040528092919081815260200182805461052590610e61565b80156105705780601f1061054757610100808354040283529160200191610570565b820191905f5260205f20905b81548152906001019060200180831161055357829003601f168201915b5050505050925081805461058390610e61565b80601f01602080910402602001604051908101604052809291908181526020018280546105af90610e61565b80156105fa5780601f106105d1576101008083540402835291602001916105fa565b820191905f5260205f20905b8154815290600101906020018083116105dd57829003601f168201915b5050505050915094509450945094505093509350935093565b5f8181526001602090815260409182902080548351818402810184019094528084526060939283018282801561067057602002820191905f5260205f20905b81546001600160a01b03168152600190910190602001808311610652575b50505050509050919050565b5f61068883338461096c565b600381015490915060ff16156106d25760405162461bcd60e51b815260206004820152600f60248201526e185b1c9958591e481c995d9bdad959608a1b60448201526064016101c4565b60038101805460ff191660011790556040516001600160401b03831690339085907f25156fd3288212246d8b008d5921fde376c71ed14ac2e072a506eb06fde6d09d905f90a4505050565b5f87815260016020908152604080832080548251818502810185019093528083528493849392919083018282801561077c57602002820191905f5260205f20905b81546001600160a01b0316815260019091019060200180831161075e575b50939450508a1592506107c2915050578888808060200260200160405190810160405280939291908181526020018383602002808284375f920191909152509293505050505b5f805b825181101561090b575f8c8152602081905260408120845182908690859081106107f1576107f1611066565b60200260200101516001600160a01b03166001600160a01b031681526020019081526020015f2090505f5f90505b81548110156109015781818154811061083a5761083a611066565b5f91825260209091206003600490920201015460ff1680610883575061088182828154811061086b5761086b611066565b905f5260205f2090600402016001018c8c610a47565b155b806108b657506108b482828154811061089e5761089e611066565b905f5260205f2090600402016002018a8a610a47565b155b6108f9578181815481106108cc576108cc611066565b5f9182526020909120600490910201546108e99060ff168561108e565b9350866108f5816110a1565b9750505b60010161081f565b50506001016107c5565b506001600160401b038416156109335761092e6001600160401b038516826110cb565b610935565b5f5b9250505097509795505050505050565b5f828152602081815260408083206001600160a01b03851684529091529020545b92915050565b5f5f826001600160401b03161180156109ad57505f848152602081815260408083206001600160a01b03871684529091529020546001600160401b03831611155b6109ef5760405162461bcd60e51b8152602060048201526013602482015272696e646578206f7574206f6620626f756e647360681b60448201526064016101c4565b5f848152602081815260408083206001600160a01b03871684529091529020610a196001846110ea565b6001600160401b031681548110610a3257610a32611066565b905f5260205f20906004020190509392505050565b5f811580610a8057508282604051610a60929190610fae565b604051809103902084604051610a769190611109565b6040518091039020145b949350505050565b803560ff81168114610a98575f5ffd5b919050565b5f5f83601f840112610aad575f5ffd5b5081356001600160401b03811115610ac3575f5ffd5b602083019150836020828501011115610ada575f5ffd5b9250929050565b5f5f5f5f5f5f5f5f5f5f5f60e08c8e031215610afb575f5ffd5b8b359a50610b0b60208d01610a88565b995060408c01356001600160401b03811115610b25575f5ffd5b610b318e828f01610a9d565b909a5098505060608c01356001600160401b03811115610b4f575f5ffd5b610b5b8e828f01610a9d565b90985096505060808c01356001600160401b03811115610b79575f5ffd5b610b858e828f01610a9d565b90965094505060a08c01356001600160401b03811115610ba3575f5ffd5b610baf8e828f01610a9d565b9c9f9b9e50999c989b979a969995989497959660c090950135949350505050565b80356001600160a01b0381168114610a98575f5ffd5b80356001600160401b0381168114610a98575f5ffd5b5f5f5f60608486031215610c0e575f5ffd5b83359250610c1e60208501610bd0565b9150610c2c60408501610be6565b90509250925092565b5f81518084528060208401602086015e5f602082860101526020601f19601f83011685010191505092915050565b60ff85168152608060208201525f610c7e6080830186610c35565b8281036040840152610c908186610c35565b915050821515606083015295945050505050565b5f60208284031215610cb4575f5ffd5b5035919050565b602080825282518282018190525f918401906040840190835b81811015610cfb5783516001600160a01b0316835260209384019390920191600101610cd4565b509095945050505050565b5f5f60408385031215610d17575f5ffd5b82359150610d2760208401610be6565b90509250929050565b5f5f5f5f5f5f5f6080888a031215610d46575f5ffd5b8735965060208801356001600160401b03811115610d62575f5ffd5b8801601f81018a13610d72575f5ffd5b80356001600160401b03811115610d87575f5ffd5b8a60208260051b8401011115610d9b575f5ffd5b6020919091019650945060408801356001600160401b03811115610dbd575f5ffd5b610dc98a828b01610a9d565b90955093505060608801356001600160401b03811115610de7575f5ffd5b610df38a828b01610a9d565b989b979a50959850939692959293505050565b5f5f60408385031215610e17575f5ffd5b82359150610d2760208401610bd0565b5f60208284031215610e37575f5ffd5b81518015158114610e46575f5ffd5b9392505050565b634e487b7160e01b5f52604160045260245ffd5b600181811c90821680610e7557607f821691505b602082108103610e9357634e487b7160e01b5f52602260045260245ffd5b50919050565b601f821115610eeb5782821115610eeb57805f5260205f20601f840160051c6020851015610ec457505f5b90810190601f840160051c035f5b81811015610ee7575f83820155600101610ed2565b5050505b505050565b81516001600160401b03811115610f0957610f09610e4d565b610f1d81610f178454610e61565b84610e99565b6020601f821160018114610f4f575f8315610f385750848201515b5f19600385901b1c1916600184901b178455610fa7565b5f84815260208120601f198516915b82811015610f7e5787850151825560209485019460019092019101610f5e565b5084821015610f9b57868401515f19600387901b60f8161c191681555b505060018360011b0184555b5050505050565b818382375f9101908152919050565b81835281816020850137505f828201602090810191909152601f909101601f19169091010190565b6001600160401b038c16815260ff8b16602082015260e060408201525f61101060e083018b8d610fbd565b8281036060840152611023818a8c610fbd565b9050828103608084015261103881888a610fbd565b905082810360a084015261104d818688610fbd565b9150508260c08301529c9b505050505050505050505050565b634e487b7160e01b5f52603260045260245ffd5b634e487b7160e01b5f52601160045260245ffd5b808201808211156109665761096661107a565b5f6001600160401b0382166001600160401b0381036110c2576110c261107a565b60010192915050565b5f826110e557634e487b7160e01b5f52601260045260245ffd5b500490565b6001600160401b0382811682821603908111156109665761096661107a565b5f5f835461111681610e61565b60018216801561112d57600181146111425761116f565b60ff198316865281151582028601935061116f565b865f5260205f205f5b838110156111675781548882015260019091019060200161114b565b505081860193505b50919594505050505056fea2646970667358221220f429cd95025c86d4077c45a63e954fc16bc9a0b81c63622eaf3b4e1406881edc64736f6c63430008250033",
}

// ReputationRegistry is an auto generated Go binding around an Ethereum contract.
type ReputationRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *ReputationRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewReputationRegistry creates a new instance of ReputationRegistry.
func NewReputationRegistry() *ReputationRegistry {
	parsed, err := ReputationRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &ReputationRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *ReputationRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address identityRegistry) returns()
func (reputationRegistry *ReputationRegistry) PackConstructor(identityRegistry common.Address) []byte {
	enc, err := reputationRegistry.abi.Pack("", identityRegistry)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackGetClients is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x42dd519c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getClients(uint256 agentId) view returns(address[])
func (reputationRegistry *ReputationRegistry) PackGetClients(agentId *big.Int) []byte {
	enc, err := reputationRegistry.abi.Pack("getClients", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetClients is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x42dd519c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getClients(uint256 agentId) view returns(address[])
func (reputationRegistry *ReputationRegistry) TryPackGetClients(agentId *big.Int) ([]byte, error) {
	return reputationRegistry.abi.Pack("getClients", agentId)
}

// UnpackGetClients is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x42dd519c.
//
// Solidity: function getClients(uint256 agentId) view returns(address[])
func (reputationRegistry *ReputationRegistry) UnpackGetClients(data []byte) ([]common.Address, error) {
	out, err := reputationRegistry.abi.Unpack("getClients", data)
	if err != nil {
		return *new([]common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new([]common.Address)).(*[]common.Address)
	return out0, nil
}

// PackGetIdentityRegistry is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbc4d861b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getIdentityRegistry() view returns(address)
func (reputationRegistry *ReputationRegistry) PackGetIdentityRegistry() []byte {
	enc, err := reputationRegistry.abi.Pack("getIdentityRegistry")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetIdentityRegistry is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbc4d861b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getIdentityRegistry() view returns(address)
func (reputationRegistry *ReputationRegistry) TryPackGetIdentityRegistry() ([]byte, error) {
	return reputationRegistry.abi.Pack("getIdentityRegistry")
}

// UnpackGetIdentityRegistry is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xbc4d861b.
//
// Solidity: function getIdentityRegistry() view returns(address)
func (reputationRegistry *ReputationRegistry) UnpackGetIdentityRegistry(data []byte) (common.Address, error) {
	out, err := reputationRegistry.abi.Unpack("getIdentityRegistry", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackGetLastIndex is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2d81759.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getLastIndex(uint256 agentId, address clientAddress) view returns(uint64)
func (reputationRegistry *ReputationRegistry) PackGetLastIndex(agentId *big.Int, clientAddress common.Address) []byte {
	enc, err := reputationRegistry.abi.Pack("getLastIndex", agentId, clientAddress)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetLastIndex is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2d81759.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getLastIndex(uint256 agentId, address clientAddress) view returns(uint64)
func (reputationRegistry *ReputationRegistry) TryPackGetLastIndex(agentId *big.Int, clientAddress common.Address) ([]byte, error) {
	return reputationRegistry.abi.Pack("getLastIndex", agentId, clientAddress)
}

// UnpackGetLastIndex is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf2d81759.
//
// Solidity: function getLastIndex(uint256 agentId, address clientAddress) view returns(uint64)
func (reputationRegistry *ReputationRegistry) UnpackGetLastIndex(data []byte) (uint64, error) {
	out, err := reputationRegistry.abi.Unpack("getLastIndex", data)
	if err != nil {
		return *new(uint64), err
	}
	out0 := *abi.ConvertType(out[0], new(uint64)).(*uint64)
	return out0, nil
}

// PackGetSummary is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x81bbba58.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns(uint64 count, uint8 averageScore)
func (reputationRegistry *ReputationRegistry) PackGetSummary(agentId *big.Int, clientAddresses []common.Address, tag1 string, tag2 string) []byte {
	enc, err := reputationRegistry.abi.Pack("getSummary", agentId, clientAddresses, tag1, tag2)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetSummary is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x81bbba58.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns(uint64 count, uint8 averageScore)
func (reputationRegistry *ReputationRegistry) TryPackGetSummary(agentId *big.Int, clientAddresses []common.Address, tag1 string, tag2 string) ([]byte, error) {
	return reputationRegistry.abi.Pack("getSummary", agentId, clientAddresses, tag1, tag2)
}

// GetSummaryOutput serves as a container for the return parameters of contract
// method GetSummary.
type GetSummaryOutput struct {
	Count        uint64
	AverageScore uint8
}

// UnpackGetSummary is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x81bbba58.
//
// Solidity: function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns(uint64 count, uint8 averageScore)
func (reputationRegistry *ReputationRegistry) UnpackGetSummary(data []byte) (GetSummaryOutput, error) {
	out, err := reputationRegistry.abi.Unpack("getSummary", data)
	outstruct := new(GetSummaryOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Count = *abi.ConvertType(out[0], new(uint64)).(*uint64)
	outstruct.AverageScore = *abi.ConvertType(out[1], new(uint8)).(*uint8)
	return *outstruct, nil
}

// PackGiveFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1bae8c36.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function giveFeedback(uint256 agentId, uint8 score, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash) returns()
func (reputationRegistry *ReputationRegistry) PackGiveFeedback(agentId *big.Int, score uint8, tag1 string, tag2 string, endpoint string, feedbackURI string, feedbackHash [32]byte) []byte {
	enc, err := reputationRegistry.abi.Pack("giveFeedback", agentId, score, tag1, tag2, endpoint, feedbackURI, feedbackHash)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGiveFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1bae8c36.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function giveFeedback(uint256 agentId, uint8 score, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash) returns()
func (reputationRegistry *ReputationRegistry) TryPackGiveFeedback(agentId *big.Int, score uint8, tag1 string, tag2 string, endpoint string, feedbackURI string, feedbackHash [32]byte) ([]byte, error) {
	return reputationRegistry.abi.Pack("giveFeedback", agentId, score, tag1, tag2, endpoint, feedbackURI, feedbackHash)
}

// PackReadFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x232b0810.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns(uint8 score, string tag1, string tag2, bool isRevoked)
func (reputationRegistry *ReputationRegistry) PackReadFeedback(agentId *big.Int, clientAddress common.Address, feedbackIndex uint64) []byte {
	enc, err := reputationRegistry.abi.Pack("readFeedback", agentId, clientAddress, feedbackIndex)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackReadFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x232b0810.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns(uint8 score, string tag1, string tag2, bool isRevoked)
func (reputationRegistry *ReputationRegistry) TryPackReadFeedback(agentId *big.Int, clientAddress common.Address, feedbackIndex uint64) ([]byte, error) {
	return reputationRegistry.abi.Pack("readFeedback", agentId, clientAddress, feedbackIndex)
}

// ReadFeedbackOutput serves as a container for the return parameters of contract
// method ReadFeedback.
type ReadFeedbackOutput struct {
	Score     uint8
	Tag1      string
	Tag2      string
	IsRevoked bool
}

// UnpackReadFeedback is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x232b0810.
//
// Solidity: function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns(uint8 score, string tag1, string tag2, bool isRevoked)
func (reputationRegistry *ReputationRegistry) UnpackReadFeedback(data []byte) (ReadFeedbackOutput, error) {
	out, err := reputationRegistry.abi.Unpack("readFeedback", data)
	outstruct := new(ReadFeedbackOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Score = *abi.ConvertType(out[0], new(uint8)).(*uint8)
	outstruct.Tag1 = *abi.ConvertType(out[1], new(string)).(*string)
	outstruct.Tag2 = *abi.ConvertType(out[2], new(string)).(*string)
	outstruct.IsRevoked = *abi.ConvertType(out[3], new(bool)).(*bool)
	return *outstruct, nil
}

// PackRevokeFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4ab3ca99.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revokeFeedback(uint256 agentId, uint64 feedbackIndex) returns()
func (reputationRegistry *ReputationRegistry) PackRevokeFeedback(agentId *big.Int, feedbackIndex uint64) []byte {
	enc, err := reputationRegistry.abi.Pack("revokeFeedback", agentId, feedbackIndex)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevokeFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4ab3ca99.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revokeFeedback(uint256 agentId, uint64 feedbackIndex) returns()
func (reputationRegistry *ReputationRegistry) TryPackRevokeFeedback(agentId *big.Int, feedbackIndex uint64) ([]byte, error) {
	return reputationRegistry.abi.Pack("revokeFeedback", agentId, feedbackIndex)
}

// ReputationRegistryFeedbackRevoked represents a FeedbackRevoked event raised by the ReputationRegistry contract.
type ReputationRegistryFeedbackRevoked struct {
	AgentId       *big.Int
	ClientAddress common.Address
	FeedbackIndex uint64
	Raw           *types.Log // Blockchain specific contextual infos
}

const ReputationRegistryFeedbackRevokedEventName = "FeedbackRevoked"

// ContractEventName returns the user-defined event name.
func (ReputationRegistryFeedbackRevoked) ContractEventName() string {
	return ReputationRegistryFeedbackRevokedEventName
}

// UnpackFeedbackRevokedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex)
func (reputationRegistry *ReputationRegistry) UnpackFeedbackRevokedEvent(log *types.Log) (*ReputationRegistryFeedbackRevoked, error) {
	event := "FeedbackRevoked"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != reputationRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ReputationRegistryFeedbackRevoked)
	if len(log.Data) > 0 {
		if err := reputationRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range reputationRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// ReputationRegistryNewFeedback represents a NewFeedback event raised by the ReputationRegistry contract.
type ReputationRegistryNewFeedback struct {
	AgentId       *big.Int
	ClientAddress common.Address
	FeedbackIndex uint64
	Score         uint8
	IndexedTag1   common.Hash
	Tag1          string
	Tag2          string
	Endpoint      string
	FeedbackURI   string
	FeedbackHash  [32]byte
	Raw           *types.Log // Blockchain specific contextual infos
}

const ReputationRegistryNewFeedbackEventName = "NewFeedback"

// ContractEventName returns the user-defined event name.
func (ReputationRegistryNewFeedback) ContractEventName() string {
	return ReputationRegistryNewFeedbackEventName
}

// UnpackNewFeedbackEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, uint8 score, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)
func (reputationRegistry *ReputationRegistry) UnpackNewFeedbackEvent(log *types.Log) (*ReputationRegistryNewFeedback, error) {
	event := "NewFeedback"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != reputationRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ReputationRegistryNewFeedback)
	if len(log.Data) > 0 {
		if err := reputationRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range reputationRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}
