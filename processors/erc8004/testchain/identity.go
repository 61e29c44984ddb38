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

// IdentityRegistryMetaData contains all meta data concerning the IdentityRegistry contract.
var IdentityRegistryMetaData = bind.MetaData{
	ABI: "[{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"approved\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"tokenId\",\"type\":\"uint256\"}],\"name\":\"Approval\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"operator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"bool\",\"name\":\"approved\",\"type\":\"bool\"}],\"name\":\"ApprovalForAll\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"agentURI\",\"type\":\"string\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"name\":\"Registered\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"tokenId\",\"type\":\"uint256\"}],\"name\":\"Transfer\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"newURI\",\"type\":\"string\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"updatedBy\",\"type\":\"address\"}],\"name\":\"URIUpdated\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"approve\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"name\":\"balanceOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"getApproved\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"operator\",\"type\":\"address\"}],\"name\":\"isApprovedForAll\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"isAuthorizedOrOwner\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"name\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"ownerOf\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"string\",\"name\":\"agentURI\",\"type\":\"string\"}],\"name\":\"register\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"string\",\"name\":\"newURI\",\"type\":\"string\"}],\"name\":\"setAgentURI\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"operator\",\"type\":\"address\"},{\"internalType\":\"bool\",\"name\":\"approved\",\"type\":\"bool\"}],\"name\":\"setApprovalForAll\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"symbol\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"tokenURI\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"transferFrom\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "IdentityRegistry",
	Bin: "0x6080604052348015600e575f5ffd5b50610caa8061001c5f395ff3fe608060405234801561000f575f5ffd5b50600436106100cb575f3560e01c806370a0823111610088578063c87b56dd11610063578063c87b56dd146101ed578063d95e72be14610200578063e985e9c514610223578063f2c298be1461025e575f5ffd5b806370a082311461018357806395d89b41146101b9578063a22cb465146101da575f5ffd5b806306fdde03146100cf578063081812fc1461010a578063095ea7b3146101355780630af28bd31461014a57806323b872dd1461015d5780636352211e14610170575b5f5ffd5b60408051808201909152600d81526c4167656e744964656e7469747960981b60208201525b604051610101919061085b565b60405180910390f35b61011d610118366004610890565b610271565b6040516001600160a01b039091168152602001610101565b6101486101433660046108bd565b610297565b005b61014861015836600461092a565b61035c565b61014861016b366004610972565b6103e4565b61011d61017e366004610890565b610577565b6101ab6101913660046109ac565b6001600160a01b03165f9081526002602052604090205490565b604051908152602001610101565b6040805180820190915260058152641051d1539560da1b60208201526100f4565b6101486101e83660046109c5565b6105d0565b6100f46101fb366004610890565b61063b565b61021361020e3660046108bd565b6106e2565b6040519015158152602001610101565b6102136102313660046109fe565b6001600160a01b039182165f90815260046020908152604080832093909416825291909152205460ff1690565b6101ab61026c366004610a2f565b6106f6565b5f61027b82610577565b50505f908152600360205260409020546001600160a01b031690565b5f6102a182610577565b9050336001600160a01b03821614806102dc57506001600160a01b0381165f90815260046020908152604080832033845290915290205460ff165b6103015760405162461bcd60e51b81526004016102f890610a6e565b60405180910390fd5b5f8281526003602052604080822080546001600160a01b0319166001600160a01b0387811691821790925591518593918516917f8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b92591a4505050565b61036633846107df565b6103825760405162461bcd60e51b81526004016102f890610a6e565b5f83815260056020526040902061039a828483610b39565b50336001600160a01b0316837f3a2c7fffc2cba7582c690e3b82c453ea02a308326a98a3ad7576c606336409fb84846040516103d7929190610bf4565b60405180910390a3505050565b6103ee33826107df565b61040a5760405162461bcd60e51b81526004016102f890610a6e565b826001600160a01b031661041d82610577565b6001600160a01b0316146104635760405162461bcd60e51b815260206004820152600d60248201526c3737ba103a34329037bbb732b960991b60448201526064016102f8565b6001600160a01b0382166104a85760405162461bcd60e51b815260206004820152600c60248201526b7a65726f206164647265737360a01b60448201526064016102f8565b5f81815260036020908152604080832080546001600160a01b03191690556001600160a01b0386168352600290915281208054600192906104ea908490610c36565b90915550506001600160a01b0382165f908152600260205260408120805460019290610517908490610c49565b90915550505f8181526001602052604080822080546001600160a01b0319166001600160a01b0386811691821790925591518493918716917fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef91a4505050565b5f818152600160205260409020546001600160a01b0316806105cb5760405162461bcd60e51b815260206004820152600d60248201526c1b9bc81cdd58da081859d95b9d609a1b60448201526064016102f8565b919050565b335f8181526004602090815260408083206001600160a01b03871680855290835292819020805460ff191686151590811790915590519081529192917f17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31910160405180910390a35050565b606061064682610577565b505f828152600560205260409020805461065f90610aaa565b80601f016020809104026020016040519081016040528092919081815260200182805461068b90610aaa565b80156106d65780601f106106ad576101008083540402835291602001916106d6565b820191905f5260205f20905b8154815290600101906020018083116106b957829003601f168201915b50505050509050919050565b5f6106ed83836107df565b90505b92915050565b5f8054818061070483610c5c565b909155505f81815260016020818152604080842080546001600160a01b0319163390811790915584526002909152822080549394509092909190610749908490610c49565b90915550505f818152600560205260409020610766838583610b39565b50604051819033905f907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef908290a4336001600160a01b0316817fca52e62c367d81bb2e328eb795f7c7ba24afb478408a26c0e201d155c449bc4a85856040516107d1929190610bf4565b60405180910390a392915050565b5f5f6107ea83610577565b9050806001600160a01b0316846001600160a01b0316148061082457505f838152600360205260409020546001600160a01b038581169116145b8061085357506001600160a01b038082165f9081526004602090815260408083209388168352929052205460ff165b949350505050565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b5f602082840312156108a0575f5ffd5b5035919050565b80356001600160a01b03811681146105cb575f5ffd5b5f5f604083850312156108ce575f5ffd5b6108d7836108a7565b946020939093013593505050565b5f5f83601f8401126108f5575f5ffd5b50813567ffffffffffffffff81111561090c575f5ffd5b602083019150836020828501011115610923575f5ffd5b9250929050565b5f5f5f6040848603121561093c575f5ffd5b83359250602084013567ffffffffffffffff811115610959575f5ffd5b610965868287016108e5565b9497909650939450505050565b5f5f5f60608486031215610984575f5ffd5b61098d846108a7565b925061099b602085016108a7565b929592945050506040919091013590565b5f602082840312156109bc575f5ffd5b6106ed826108a7565b5f5f604083850312156109d6575f5ffd5b6109df836108a7565b9150602083013580151581146109f3575f5ffd5b809150509250929050565b5f5f60408385031215610a0f575f5ffd5b610a18836108a7565b9150610a26602084016108a7565b90509250929050565b5f5f60208385031215610a40575f5ffd5b823567ffffffffffffffff811115610a56575f5ffd5b610a62858286016108e5565b90969095509350505050565b6020808252600e908201526d1b9bdd08185d5d1a1bdc9a5e995960921b604082015260600190565b634e487b7160e01b5f52604160045260245ffd5b600181811c90821680610abe57607f821691505b602082108103610adc57634e487b7160e01b5f52602260045260245ffd5b50919050565b601f821115610b345782821115610b3457805f5260205f20601f840160051c6020851015610b0d57505f5b90810190601f840160051c035f5b81811015610b30575f83820155600101610b1b565b5050505b505050565b67ffffffffffffffff831115610b5157610b51610a96565b610b6583610b5f8354610aaa565b83610ae2565b5f601f841160018114610b96575f8515610b7f5750838201355b5f19600387901b1c1916600186901b178355610bed565b5f83815260208120601f198716915b82811015610bc55786850135825560209485019460019092019101610ba5565b5086821015610be1575f1960f88860031b161c19848701351681555b505060018560011b0183555b5050505050565b60208152816020820152818360408301375f818301604090810191909152601f909201601f19160101919050565b634e487b7160e01b5f52601160045260245ffd5b818103818111156106f0576106f0610c22565b808201808211156106f0576106f0610c22565b5f60018201610c6d57610c6d610c22565b506001019056fea26469706673582212204be183d172a27ec79f8c2b5d069ef1d20b4a08b08fa91505cd807e996b927fca64736f6c63430008250033",
}

// IdentityRegistry is an auto generated Go binding around an Ethereum contract.
type IdentityRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *IdentityRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewIdentityRegistry creates a new instance of IdentityRegistry.
func NewIdentityRegistry() *IdentityRegistry {
	parsed, err := IdentityRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &IdentityRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *IdentityRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function approve(address to, uint256 agentId) returns()
func (identityRegistry *IdentityRegistry) PackApprove(to common.Address, agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("approve", to, agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function approve(address to, uint256 agentId) returns()
func (identityRegistry *IdentityRegistry) TryPackApprove(to common.Address, agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("approve", to, agentId)
}

// PackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function balanceOf(address owner) view returns(uint256)
func (identityRegistry *IdentityRegistry) PackBalanceOf(owner common.Address) []byte {
	enc, err := identityRegistry.abi.Pack("balanceOf", owner)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function balanceOf(address owner) view returns(uint256)
func (identityRegistry *IdentityRegistry) TryPackBalanceOf(owner common.Address) ([]byte, error) {
	return identityRegistry.abi.Pack("balanceOf", owner)
}

// UnpackBalanceOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x70a08231.
//
// Solidity: function balanceOf(address owner) view returns(uint256)
func (identityRegistry *IdentityRegistry) UnpackBalanceOf(data []byte) (*big.Int, error) {
	out, err := identityRegistry.abi.Unpack("balanceOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackGetApproved is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x081812fc.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getApproved(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) PackGetApproved(agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("getApproved", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetApproved is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x081812fc.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getApproved(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) TryPackGetApproved(agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("getApproved", agentId)
}

// UnpackGetApproved is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x081812fc.
//
// Solidity: function getApproved(uint256 agentId) view returns(address)
func (identityRegistry *IdentityRegistry) UnpackGetApproved(data []byte) (common.Address, error) {
	out, err := identityRegistry.abi.Unpack("getApproved", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackIsApprovedForAll is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe985e9c5.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isApprovedForAll(address owner, address operator) view returns(bool)
func (identityRegistry *IdentityRegistry) PackIsApprovedForAll(owner common.Address, operator common.Address) []byte {
	enc, err := identityRegistry.abi.Pack("isApprovedForAll", owner, operator)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsApprovedForAll is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe985e9c5.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isApprovedForAll(address owner, address operator) view returns(bool)
func (identityRegistry *IdentityRegistry) TryPackIsApprovedForAll(owner common.Address, operator common.Address) ([]byte, error) {
	return identityRegistry.abi.Pack("isApprovedForAll", owner, operator)
}

// UnpackIsApprovedForAll is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe985e9c5.
//
// Solidity: function isApprovedForAll(address owner, address operator) view returns(bool)
func (identityRegistry *IdentityRegistry) UnpackIsApprovedForAll(data []byte) (bool, error) {
	out, err := identityRegistry.abi.Unpack("isApprovedForAll", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackIsAuthorizedOrOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd95e72be.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isAuthorizedOrOwner(address spender, uint256 agentId) view returns(bool)
func (identityRegistry *IdentityRegistry) PackIsAuthorizedOrOwner(spender common.Address, agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("isAuthorizedOrOwner", spender, agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsAuthorizedOrOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd95e72be.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isAuthorizedOrOwner(address spender, uint256 agentId) view returns(bool)
func (identityRegistry *IdentityRegistry) TryPackIsAuthorizedOrOwner(spender common.Address, agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("isAuthorizedOrOwner", spender, agentId)
}

// UnpackIsAuthorizedOrOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xd95e72be.
//
// Solidity: function isAuthorizedOrOwner(address spender, uint256 agentId) view returns(bool)
func (identityRegistry *IdentityRegistry) UnpackIsAuthorizedOrOwner(data []byte) (bool, error) {
	out, err := identityRegistry.abi.Unpack("isAuthorizedOrOwner", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function name() pure returns(string)
func (identityRegistry *IdentityRegistry) PackName() []byte {
	enc, err := identityRegistry.abi.Pack("name")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function name() pure returns(string)
func (identityRegistry *IdentityRegistry) TryPackName() ([]byte, error) {
	return identityRegistry.abi.Pack("name")
}

// UnpackName is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x06fdde03.
//
// Solidity: function name() pure returns(string)
func (identityRegistry *IdentityRegistry) UnpackName(data []byte) (string, error) {
	out, err := identityRegistry.abi.Unpack("name", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackOwnerOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6352211e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function ownerOf(uint256 agentId) view returns(address owner)
func (identityRegistry *IdentityRegistry) PackOwnerOf(agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("ownerOf", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwnerOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6352211e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function ownerOf(uint256 agentId) view returns(address owner)
func (identityRegistry *IdentityRegistry) TryPackOwnerOf(agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("ownerOf", agentId)
}

// UnpackOwnerOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6352211e.
//
// Solidity: function ownerOf(uint256 agentId) view returns(address owner)
func (identityRegistry *IdentityRegistry) UnpackOwnerOf(data []byte) (common.Address, error) {
	out, err := identityRegistry.abi.Unpack("ownerOf", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackRegister is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2c298be.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function register(string agentURI) returns(uint256 agentId)
func (identityRegistry *IdentityRegistry) PackRegister(agentURI string) []byte {
	enc, err := identityRegistry.abi.Pack("register", agentURI)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRegister is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2c298be.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function register(string agentURI) returns(uint256 agentId)
func (identityRegistry *IdentityRegistry) TryPackRegister(agentURI string) ([]byte, error) {
	return identityRegistry.abi.Pack("register", agentURI)
}

// UnpackRegister is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf2c298be.
//
// Solidity: function register(string agentURI) returns(uint256 agentId)
func (identityRegistry *IdentityRegistry) UnpackRegister(data []byte) (*big.Int, error) {
	out, err := identityRegistry.abi.Unpack("register", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackSetAgentURI is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0af28bd3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setAgentURI(uint256 agentId, string newURI) returns()
func (identityRegistry *IdentityRegistry) PackSetAgentURI(agentId *big.Int, newURI string) []byte {
	enc, err := identityRegistry.abi.Pack("setAgentURI", agentId, newURI)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetAgentURI is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0af28bd3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setAgentURI(uint256 agentId, string newURI) returns()
func (identityRegistry *IdentityRegistry) TryPackSetAgentURI(agentId *big.Int, newURI string) ([]byte, error) {
	return identityRegistry.abi.Pack("setAgentURI", agentId, newURI)
}

// PackSetApprovalForAll is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa22cb465.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setApprovalForAll(address operator, bool approved) returns()
func (identityRegistry *IdentityRegistry) PackSetApprovalForAll(operator common.Address, approved bool) []byte {
	enc, err := identityRegistry.abi.Pack("setApprovalForAll", operator, approved)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetApprovalForAll is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa22cb465.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setApprovalForAll(address operator, bool approved) returns()
func (identityRegistry *IdentityRegistry) TryPackSetApprovalForAll(operator common.Address, approved bool) ([]byte, error) {
	return identityRegistry.abi.Pack("setApprovalForAll", operator, approved)
}

// PackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function symbol() pure returns(string)
func (identityRegistry *IdentityRegistry) PackSymbol() []byte {
	enc, err := identityRegistry.abi.Pack("symbol")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function symbol() pure returns(string)
func (identityRegistry *IdentityRegistry) TryPackSymbol() ([]byte, error) {
	return identityRegistry.abi.Pack("symbol")
}

// UnpackSymbol is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x95d89b41.
//
// Solidity: function symbol() pure returns(string)
func (identityRegistry *IdentityRegistry) UnpackSymbol(data []byte) (string, error) {
	out, err := identityRegistry.abi.Unpack("symbol", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackTokenURI is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc87b56dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function tokenURI(uint256 agentId) view returns(string)
func (identityRegistry *IdentityRegistry) PackTokenURI(agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("tokenURI", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTokenURI is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xc87b56dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function tokenURI(uint256 agentId) view returns(string)
func (identityRegistry *IdentityRegistry) TryPackTokenURI(agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("tokenURI", agentId)
}

// UnpackTokenURI is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xc87b56dd.
//
// Solidity: function tokenURI(uint256 agentId) view returns(string)
func (identityRegistry *IdentityRegistry) UnpackTokenURI(data []byte) (string, error) {
	out, err := identityRegistry.abi.Unpack("tokenURI", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferFrom(address from, address to, uint256 agentId) returns()
func (identityRegistry *IdentityRegistry) PackTransferFrom(from common.Address, to common.Address, agentId *big.Int) []byte {
	enc, err := identityRegistry.abi.Pack("transferFrom", from, to, agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferFrom(address from, address to, uint256 agentId) returns()
func (identityRegistry *IdentityRegistry) TryPackTransferFrom(from common.Address, to common.Address, agentId *big.Int) ([]byte, error) {
	return identityRegistry.abi.Pack("transferFrom", from, to, agentId)
}

// IdentityRegistryApproval represents a Approval event raised by the IdentityRegistry contract.
type IdentityRegistryApproval struct {
	Owner    common.Address
	Approved common.Address
	TokenId  *big.Int
	Raw      *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryApprovalEventName = "Approval"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryApproval) ContractEventName() string {
	return IdentityRegistryApprovalEventName
}

// UnpackApprovalEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)
func (identityRegistry *IdentityRegistry) UnpackApprovalEvent(log *types.Log) (*IdentityRegistryApproval, error) {
	event := "Approval"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryApproval)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
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

// IdentityRegistryApprovalForAll represents a ApprovalForAll event raised by the IdentityRegistry contract.
type IdentityRegistryApprovalForAll struct {
	Owner    common.Address
	Operator common.Address
	Approved bool
	Raw      *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryApprovalForAllEventName = "ApprovalForAll"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryApprovalForAll) ContractEventName() string {
	return IdentityRegistryApprovalForAllEventName
}

// UnpackApprovalForAllEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ApprovalForAll(address indexed owner, address indexed operator, bool approved)
func (identityRegistry *IdentityRegistry) UnpackApprovalForAllEvent(log *types.Log) (*IdentityRegistryApprovalForAll, error) {
	event := "ApprovalForAll"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryApprovalForAll)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
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

// IdentityRegistryRegistered represents a Registered event raised by the IdentityRegistry contract.
type IdentityRegistryRegistered struct {
	AgentId  *big.Int
	AgentURI string
	Owner    common.Address
	Raw      *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryRegisteredEventName = "Registered"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryRegistered) ContractEventName() string {
	return IdentityRegistryRegisteredEventName
}

// UnpackRegisteredEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Registered(uint256 indexed agentId, string agentURI, address indexed owner)
func (identityRegistry *IdentityRegistry) UnpackRegisteredEvent(log *types.Log) (*IdentityRegistryRegistered, error) {
	event := "Registered"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryRegistered)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
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

// IdentityRegistryTransfer represents a Transfer event raised by the IdentityRegistry contract.
type IdentityRegistryTransfer struct {
	From    common.Address
	To      common.Address
	TokenId *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryTransferEventName = "Transfer"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryTransfer) ContractEventName() string {
	return IdentityRegistryTransferEventName
}

// UnpackTransferEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)
func (identityRegistry *IdentityRegistry) UnpackTransferEvent(log *types.Log) (*IdentityRegistryTransfer, error) {
	event := "Transfer"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryTransfer)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
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

// IdentityRegistryURIUpdated represents a URIUpdated event raised by the IdentityRegistry contract.
type IdentityRegistryURIUpdated struct {
	AgentId   *big.Int
	NewURI    string
	UpdatedBy common.Address
	Raw       *types.Log // Blockchain specific contextual infos
}

const IdentityRegistryURIUpdatedEventName = "URIUpdated"

// ContractEventName returns the user-defined event name.
func (IdentityRegistryURIUpdated) ContractEventName() string {
	return IdentityRegistryURIUpdatedEventName
}

// UnpackURIUpdatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy)
func (identityRegistry *IdentityRegistry) UnpackURIUpdatedEvent(log *types.Log) (*IdentityRegistryURIUpdated, error) {
	event := "URIUpdated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != identityRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(IdentityRegistryURIUpdated)
	if len(log.Data) > 0 {
		if err := identityRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range identityRegistry.abi.Events[event].Inputs {
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
